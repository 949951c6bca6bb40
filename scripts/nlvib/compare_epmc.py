"""`ewr modes` (Python) on the system of epmc_jenkins.m, and the comparison with NLvib's
backbone read from its CSV: frequency and modal damping ratio at equal fundamental modal
amplitude sqrt(Q1^H M Q1), interpolated in log amplitude along NLvib's points."""
import os, sys, time
import numpy as np
import ewr

kt, mun, H = float(os.environ["KT"]), float(os.environ["MUN"]), int(os.environ["H"])
lines = open(sys.argv[1]).read().split("BEGIN\n", 1)[1].splitlines()
nl = np.array([[float(v) for v in l.split(",")] for l in lines if l.count(",") == 2])
a_nl, om_nl, del_nl = nl[:, 0], nl[:, 1], nl[:, 2]
M = np.diag([0.02, 1.0])
K = np.array([[40.0, -40.0], [-40.0, 640.0]])
m = ewr.Model(
    M, K, contacts={"dim": 1, "dofs": [[0]], "mu_n": mun, "k_t": kt}, forcing=[(1, 1, 1.0)]
)
lo, hi = a_nl.min(), a_nl.max()
points = int(os.environ.get("POINTS", "100"))
t0 = time.perf_counter()
r = m.modes(lo, hi, mode=1, points=points, harmonics=f"odd:{H if H % 2 else H - 1}")
elapsed = time.perf_counter() - t0
a, om, dr, conv = (np.asarray(r[k]) for k in ("amplitude", "omega", "damping_ratio", "converged"))
# ewr's backbone (denser) interpolated in log amplitude at NLvib's points inside its range.
ok = conv.astype(bool)
la = np.log(a[ok])
inside = (a_nl >= a[ok].min()) & (a_nl <= a[ok].max())
om_e = np.interp(np.log(a_nl[inside]), la, om[ok])
dr_e = np.interp(np.log(a_nl[inside]), la, dr[ok])
d_om = np.abs(om_e - om_nl[inside]) / om_nl[inside]
d_del = np.abs(dr_e - del_nl[inside])
print(f"ewr modes: {points} amplitudes in {elapsed:.3f} s, {int(conv.sum())} converged")
print(f"omega: stuck {om[0]:.6f}, end {om[-1]:.6f} (NLvib {om_nl[0]:.6f}, {om_nl[-1]:.6f})")
print(f"largest damping ratio: ewr {dr.max():.5e} at a = {a[np.argmax(dr)]:.4g}, "
      f"NLvib {del_nl.max():.5e} at a = {a_nl[np.argmax(del_nl)]:.4g}")
print(f"largest relative frequency difference {d_om.max():.2e}; "
      f"largest damping-ratio difference {d_del.max():.2e} (of a peak {dr.max():.2e})")
print("  a (NLvib's points) | omega ewr / NLvib | D ewr / NLvib")
for k in np.linspace(0, inside.sum() - 1, 10).astype(int):
    i = np.flatnonzero(inside)[k]
    print(f"  {a_nl[i]:.4e} | {om_e[k]:.6f} / {om_nl[i]:.6f} | {dr_e[k]:.5e} / {del_nl[i]:.5e}")
