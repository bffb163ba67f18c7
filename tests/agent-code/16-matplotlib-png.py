# files: plot.png 640x480
import matplotlib.pyplot as plt
import numpy as np
from PIL import Image

fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=100)
x = np.linspace(0, 2 * np.pi, 200)
ax.plot(x, np.sin(x), linewidth=3)
ax.set_title("sine")
fig.savefig("plot.png")
img = np.asarray(Image.open("plot.png").convert("L"))
print(img.shape, int((img < 200).sum()) > 2000)
