from PIL import Image, ImageDraw, ImageFilter

img = Image.new("RGB", (200, 100), "white")
draw = ImageDraw.Draw(img)
draw.rectangle([50, 20, 149, 79], fill=(255, 0, 0))
print(img.getbbox(), img.getpixel((100, 50)), img.getpixel((10, 10)))
small = img.resize((100, 50)).convert("L")
print(small.size, small.getextrema())
blurred = img.filter(ImageFilter.GaussianBlur(2))
img.save("box.jpg", quality=90)
print(Image.open("box.jpg").format, blurred.size)
