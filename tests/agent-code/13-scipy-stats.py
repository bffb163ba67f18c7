from scipy import stats

a = [5.1, 4.9, 5.6, 5.8, 6.0, 5.5, 5.3]
b = [6.2, 6.4, 5.9, 6.8, 6.1, 6.6, 6.3]
t = stats.ttest_ind(a, b)
print(round(float(t.statistic), 3), float(t.pvalue) < 0.001)
r = stats.pearsonr([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])
print(round(float(r[0]), 4))
chi2, p, dof, _ = stats.chi2_contingency([[10, 20], [20, 10]], correction=False)
print(round(float(chi2), 4), dof)
print(round(float(stats.norm.cdf(1.96)), 4))
