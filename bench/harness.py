#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""harness.py: the benchmark harness's measuring and reporting helpers (stdlib only): one run into results.csv, the peers' wrappers, table.md and the gnuplot figures.

Subcommands (bench/run and the studies call them; run with /usr/bin/python3):
  measure  run one command, time it, take its peak RSS (getrusage of the
           children) and its JSON report, append one row to results.csv and
           its loss-against-time points to curves.csv
  limit    append one row to limits.csv
  liblinear / sgd
           the peers: train with liblinear-train or scikit-learn's
           SGDClassifier and write a report in hogtrain's --report shape
           (train_seconds, examples_per_s, test logloss, per-epoch curve)
  tovw     libsvm text to Vowpal Wabbit text (labels 1/-1)
  report   results.csv + limits.csv -> table.md, plots/*.png (gnuplot)
"""
import argparse
import csv
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

RESULT_FIELDS = ["commit", "study", "case", "tool", "params", "data", "threads", "rep",
                 "wall_s", "train_s", "examples_per_s", "nnz_per_s", "bytes_per_s", "loss",
                 "test_metric", "metric", "time_to_target_s", "peak_rss_kb", "read_bytes"]
CURVE_FIELDS = ["study", "case", "tool", "threads", "rep", "epoch", "seconds", "test_loss"]
LIMIT_FIELDS = ["limit", "threads", "value", "unit", "file", "note"]


def append_csv(path, fields, row):
    """Appends row (a dict) to the CSV at path, writing the header first if the file is new."""
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        if new:
            w.writeheader()
        w.writerow({k: row.get(k, "") for k in fields})


def num(v, fmt="%.6g"):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    return fmt % v


def die(msg):
    print("harness.py: " + msg, file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------- measure
EPOCH_TEST = re.compile(r"^epoch (\d+)/\d+ .*\| test\s+(logloss|loss|rmse) (\S+)")


def hogtrain_curve(stderr, report):
    """(epoch, cumulative train seconds, test loss) per epoch: the losses from
    the per-epoch progress lines (the report keeps only the last), the times
    from the report's epoch_seconds (the lines round to 0.01 s)."""
    losses = {}
    for line in stderr.splitlines():
        m = EPOCH_TEST.match(line)
        if m:
            try:
                losses[int(m.group(1))] = float(m.group(3))
            except ValueError:
                pass
    out, t = [], 0.0
    for e, secs in enumerate(report.get("epoch_seconds") or [], 1):
        t += secs or 0.0
        if e in losses:
            out.append((e, t, losses[e]))
    return out


def test_metric(report):
    if report.get("test_rmse") is not None:  # matrix factorisation reports
        return "rmse", report["test_rmse"]
    test = report.get("test") or {}
    for name in ("logloss", "rmse", "loss"):
        v = test.get(name)
        if v is not None:
            return name, v
    return "", None


def copy_cmd(cmd, report, i):
    """Copy i of a one-thread command for the parallel limit: pinned to CPU i
    with taskset (the command's own pinning off), its report and model to
    files of its own."""
    out, prev = ["taskset", "-c", str(i)], None
    for arg in cmd:
        out.append(arg + ".%d" % i if arg == report or prev in ("-o", "--output") else arg)
        prev = arg
    return out + ["--bind", "0"]


def run_copies(a):
    """Runs a.copies copies of a one-thread command at once, each pinned to a
    CPU of its own: as many runs that share nothing as there are threads,
    the most the cores can give at that count. Returns (wall, stderr of
    copy 0, the merged report): examples/s and non-zeros/s summed, the time
    to the target and the curve of copy 0, train_seconds the slowest's."""
    ps, t0 = [], time.monotonic()
    for i in range(a.copies):
        c = copy_cmd(a.cmd, a.report, i)
        if a.report and os.path.exists(a.report + ".%d" % i):
            os.unlink(a.report + ".%d" % i)
        ps.append((subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), c))
    outs = [(p.communicate()[1], p.returncode, c) for p, c in ps]
    wall = time.monotonic() - t0
    for err, rc, c in outs:
        if rc != 0:
            sys.stderr.write(err[-4000:])
            die("%s failed (exit %d): %s" % (a.tool, rc, " ".join(c)))
    reports = []
    for i in range(a.copies):
        with open(a.report + ".%d" % i) as f:
            reports.append(json.load(f))
    merged = dict(reports[0])
    for k in ("examples_per_s", "updates_per_s", "nnz_per_s"):
        if all(r.get(k) is not None for r in reports):
            merged[k] = sum(r[k] for r in reports)
    merged["train_seconds"] = max(r.get("train_seconds") or 0 for r in reports)
    merged["epoch_seconds"] = reports[0].get("epoch_seconds")
    return wall, outs[0][0], merged


def cmd_measure(a):
    if a.report and os.path.exists(a.report):
        os.unlink(a.report)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, inblock = usage.ru_maxrss, usage.ru_inblock
    t0 = time.monotonic()
    if a.copies > 1:
        if not a.report:
            die("--copies needs --report")
        wall, stderr, merged = run_copies(a)
        with open(a.report, "w") as f:
            json.dump(merged, f)
        p = subprocess.CompletedProcess(a.cmd, 0, "", stderr)
    else:
        p = subprocess.run(a.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    # ru_maxrss of the children is the largest child's peak; this process
    # runs one (which may run its own), so it is that command's peak.
    # ru_inblock counts the 512-byte blocks its reads took from the disk
    # (/proc/PID/io's read_bytes): a cold run's passes over its file.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    rss, read = usage.ru_maxrss, (usage.ru_inblock - inblock) * 512
    if p.returncode != 0:
        sys.stderr.write(p.stderr[-4000:])
        die("%s failed (exit %d): %s" % (a.tool, p.returncode, " ".join(a.cmd)))
    if a.warmup:
        return
    row = {"commit": a.commit, "study": a.study, "case": a.case, "tool": a.tool,
           "params": a.params, "data": os.path.basename(a.data) if a.data else "",
           "threads": a.threads, "rep": a.rep, "wall_s": num(wall),
           "peak_rss_kb": str(max(rss, before) if rss else ""), "read_bytes": str(read)}
    curve = []
    if a.report:
        with open(a.report) as f:
            r = json.load(f)
        train_s = r.get("train_seconds")
        row["train_s"] = num(train_s)
        # matrix factorisation: an example is a rating update
        row["examples_per_s"] = num(r.get("examples_per_s", r.get("updates_per_s")))
        row["nnz_per_s"] = num(r.get("nnz_per_s"))
        row["loss"] = num(r.get("train_loss", r.get("train_rmse")))
        name, v = test_metric(r)
        row["metric"] = "test_" + name if name else ""
        row["test_metric"] = num(v)
        curve = r.get("curve") or hogtrain_curve(p.stderr, r)
        if a.bytes and train_s:
            epochs = len(r.get("epoch_seconds") or []) or r.get("epochs") or 1
            row["bytes_per_s"] = num(a.bytes * a.copies * epochs / train_s)
    elif a.bytes:
        row["bytes_per_s"] = num(a.bytes / wall)
    if a.target is not None:
        hit = [t for _, t, loss in curve if loss <= a.target]
        row["time_to_target_s"] = num(hit[0]) if hit else ""
    append_csv(os.path.join(a.out, "results.csv"), RESULT_FIELDS, row)
    for e, t, loss in curve:
        append_csv(os.path.join(a.out, "curves.csv"), CURVE_FIELDS,
                   {"study": a.study, "case": a.case, "tool": a.tool, "threads": a.threads,
                    "rep": a.rep, "epoch": e, "seconds": num(t), "test_loss": num(loss)})
    ex = row.get("examples_per_s") or "-"
    print("  %s %s %s, %s threads, rep %s: %.3g s wall, %s examples/s, %s %s" % (
        a.study, a.case, a.tool, a.threads, a.rep, wall, ex, row.get("metric") or "",
        row.get("test_metric") or ""), file=sys.stderr)


def cmd_limit(a):
    append_csv(os.path.join(a.out, "limits.csv"), LIMIT_FIELDS,
               {"limit": a.name, "threads": a.threads, "value": a.value, "unit": a.unit,
                "file": os.path.basename(a.file) if a.file else "", "note": a.note})


# ---------------------------------------------------------------- peers
def logloss_binary(p_pos, labels):
    eps = 1e-15
    s = 0.0
    for p, y in zip(p_pos, labels):
        p = min(max(p, eps), 1 - eps)
        s -= math.log(p) if y > 0 else math.log(1 - p)
    return s / len(labels)


def read_labels(path):
    with open(path) as f:
        return [float(line.split(None, 1)[0]) for line in f if line.strip()]


def count_nnz(path):
    rows = nnz = 0
    with open(path) as f:
        for line in f:
            rows += 1
            nnz += line.count(":")
    return rows, nnz


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def cmd_liblinear(a):
    """liblinear-train -s 0 (L2 logistic regression, primal trust region) to
    convergence; C = 1 / (l2 * rows) matches hogtrain's mean loss + l2/2 |w|^2.
    LIBLINEAR trains on one thread here (the Debian build has no OpenMP
    solver for -s 0); its curve is one point: the end of training."""
    rows, nnz = count_nnz(a.train)
    c = 1.0 / (a.l2 * rows)
    model = a.report + ".model"
    pred = a.report + ".pred"
    t0 = time.monotonic()
    subprocess.run(["liblinear-train", "-q", "-s", "0", "-c", repr(c), "-e", repr(a.eps),
                    a.train, model], check=True)
    secs = time.monotonic() - t0
    subprocess.run(["liblinear-predict", "-b", "1", "-q", a.test, model, pred], check=True,
                   stdout=subprocess.DEVNULL)
    with open(pred) as f:
        head = f.readline().split()  # "labels 1 -1"
        col = head.index("1") if "1" in head else 1
        probs = [float(line.split()[col]) for line in f if line.strip()]
    loss = logloss_binary(probs, read_labels(a.test))
    os.unlink(model)
    os.unlink(pred)
    write_json(a.report, {"train_seconds": secs, "examples_per_s": None,
                          "nnz_per_s": None, "train_loss": None,
                          "test": {"logloss": loss}, "curve": [[1, secs, loss]],
                          "rows": rows, "nnz": nnz, "C": c})


def cmd_sgd(a):
    """scikit-learn's SGDClassifier (log loss, alpha = l2, optimal schedule),
    one partial_fit per epoch, test logloss after each; only partial_fit is
    timed. Single-threaded: SGDClassifier has no parallel binary fit."""
    try:
        from sklearn.datasets import load_svmlight_file
        from sklearn.linear_model import SGDClassifier
        from sklearn.metrics import log_loss
    except ImportError as e:
        die("scikit-learn is not importable by %s: %s" % (sys.executable, e))
    x, y = load_svmlight_file(a.train)
    xt, yt = load_svmlight_file(a.test, n_features=x.shape[1])
    xt = xt[:, :x.shape[1]]
    clf = SGDClassifier(loss="log_loss", alpha=a.l2, random_state=1)
    classes = sorted(set(y))
    curve, secs = [], 0.0
    for e in range(1, a.epochs + 1):
        t0 = time.monotonic()
        clf.partial_fit(x, y, classes=classes)
        secs += time.monotonic() - t0
        loss = log_loss(yt, clf.predict_proba(xt), labels=clf.classes_)
        curve.append([e, secs, loss])
        if a.target is not None and loss <= a.target:
            break
    ex = x.shape[0] * len(curve)
    write_json(a.report, {"train_seconds": secs, "epoch_seconds": [c[1] for c in curve],
                          "examples_per_s": ex / secs, "nnz_per_s": x.nnz * len(curve) / secs,
                          "train_loss": None, "test": {"logloss": curve[-1][2]},
                          "curve": curve})


def cmd_vw(a):
    """vw --loss_function logistic with --passes E; the test logloss read
    from its predictions (-p, with --link logistic: probabilities)."""
    model = a.report + ".model"
    pred = a.report + ".pred"
    cache = a.report + ".cache"
    t0 = time.monotonic()
    subprocess.run(["vw", "--quiet", "-d", a.train, "--loss_function", "logistic", "--passes",
                    str(a.epochs), "--holdout_off", "-c", "--cache_file", cache, "--l2",
                    repr(a.l2), "-f", model], check=True)
    secs = time.monotonic() - t0
    subprocess.run(["vw", "--quiet", "-t", "-i", model, "-d", a.test, "--link", "logistic",
                    "-p", pred], check=True)
    with open(pred) as f:
        probs = [float(line.split()[0]) for line in f if line.strip()]
    loss = logloss_binary(probs, read_labels(a.test))
    for p in (model, pred, cache):
        if os.path.exists(p):
            os.unlink(p)
    write_json(a.report, {"train_seconds": secs, "examples_per_s": None, "nnz_per_s": None,
                          "train_loss": None, "test": {"logloss": loss},
                          "curve": [[a.epochs, secs, loss]]})


def cmd_libffm(a):
    """LIBFFM's ffm-train (k latent factors, -t epochs, -s threads) with the
    test set as its validation set: its per-iteration table gives the
    curve, (iteration, its cumulative training seconds, the test logloss);
    the conversion to its binary cache is left out of the times, as
    hogtrain's reading is. The tool is found on PATH or at --bin."""
    exe = a.bin or shutil.which("ffm-train")
    model = a.report + ".model"
    # ffm-train caches each text as NAME.bin in its working folder: the
    # report's, where they are removed after.
    work = os.path.dirname(os.path.abspath(a.report))
    ab = os.path.abspath
    cmd = [ab(exe), "-k", str(a.k), "-t", str(a.epochs), "-s", str(a.threads), "-r", repr(a.step),
           "-l", repr(a.l2), "-p", ab(a.test), ab(a.train), ab(model)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=work)
    if p.returncode != 0:
        sys.stderr.write(p.stdout[-4000:])
        die("ffm-train failed (exit %d): %s" % (p.returncode, " ".join(cmd)))
    curve = []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[0].isdigit():
            curve.append([int(f[0]), float(f[3]), float(f[2])])
    for q in (model, os.path.join(work, os.path.basename(a.train) + ".bin"),
              os.path.join(work, os.path.basename(a.test) + ".bin")):
        if os.path.exists(q):
            os.unlink(q)
    if not curve:
        die("ffm-train printed no iterations: %s" % p.stdout[-2000:])
    write_json(a.report, {"train_seconds": curve[-1][1], "examples_per_s": None, "nnz_per_s": None,
                          "train_loss": None, "test": {"logloss": min(c[2] for c in curve)}, "curve": curve})


# An epoch's line of xlearn_train, its colours taken off: "[  33%  ]  1  0.5838  0.5768  0.10".
XLEARN_EPOCH = re.compile(r"^\[\s*\d+%\s*\]\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$")


def cmd_xlearn(a):
    """xLearn's xlearn_train (-s 0 LR, 1 FM, 2 FFM; k factors; -e epochs;
    -nthread) with the test set as its validation set and early stopping
    off: its per-epoch table (epoch, train loss, test loss, seconds of the
    epoch) gives the curve. xLearn needs USER set."""
    exe = a.bin or shutil.which("xlearn_train")
    kind = {"lr": "0", "fm": "1", "ffm": "2"}[a.model]
    model = a.report + ".model"
    cmd = [exe, a.train, "-s", kind, "-v", a.test, "-e", str(a.epochs), "-k", str(a.k),
           "-nthread", str(a.threads), "-m", model, "--dis-es", "--no-bin"]
    env = dict(os.environ)
    env.setdefault("USER", "bench")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if p.returncode != 0:
        sys.stderr.write(p.stdout[-4000:])
        die("xlearn_train failed (exit %d): %s" % (p.returncode, " ".join(cmd)))
    curve, t = [], 0.0
    for line in p.stdout.splitlines():
        m = XLEARN_EPOCH.match(re.sub(r"\x1b\[[0-9;]*m", "", line))
        if m:
            t += float(m.group(4))
            curve.append([int(m.group(1)), t, float(m.group(3))])
    for q in (model, a.train + ".bin", a.test + ".bin"):
        if os.path.exists(q):
            os.unlink(q)
    if not curve:
        die("xlearn_train printed no epochs: %s" % p.stdout[-2000:])
    write_json(a.report, {"train_seconds": curve[-1][1], "examples_per_s": None, "nnz_per_s": None,
                          "train_loss": None, "test": {"logloss": min(c[2] for c in curve)}, "curve": curve})


def cmd_vwq(a):
    """Vowpal Wabbit with every pair of namespaces crossed (-q ::, -b bits),
    logistic loss, --passes from its cache: one point of the curve per run,
    the test logloss from its predictions (labels 0/1 given to it as -1/1)."""
    model, pred, cache = a.report + ".model", a.report + ".pred", a.report + ".cache"
    def pm1(src, dst):
        with open(src) as f, open(dst, "w") as g:
            for line in f:
                g.write("-1" + line[1:] if line.startswith("0 ") else line)
    tr, te = a.report + ".train.vw", a.report + ".test.vw"
    pm1(a.train, tr)
    pm1(a.test, te)
    t0 = time.monotonic()
    subprocess.run(["vw", "--quiet", "-d", tr, "-q", "::", "-b", str(a.bits), "--loss_function", "logistic",
                    "--passes", str(a.epochs), "--holdout_off", "-c", "--cache_file", cache, "-f", model],
                   check=True)
    secs = time.monotonic() - t0
    subprocess.run(["vw", "--quiet", "-t", "-i", model, "-d", te, "--link", "logistic", "-p", pred], check=True)
    with open(pred) as f:
        probs = [float(line.split()[0]) for line in f if line.strip()]
    loss = logloss_binary(probs, read_labels(a.test))
    for q in (model, pred, cache, tr, te):
        if os.path.exists(q):
            os.unlink(q)
    write_json(a.report, {"train_seconds": secs, "examples_per_s": None, "nnz_per_s": None,
                          "train_loss": None, "test": {"logloss": loss}, "curve": [[a.epochs, secs, loss]]})


PARSE_LINE = re.compile(r"^\s*(\d+) threads?\s*: parse\s+(\d+) MB/s \(median of (\d+); min (\d+), max (\d+)\)")


def cmd_parse_bench(a):
    """Runs bench_parse and records one row per format and thread count: the
    median parse rate (bytes/s of text) of its passes, min and max in params."""
    p = subprocess.run([a.bench, str(a.mb), str(a.reps), str(a.threads)], stdout=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        die("bench_parse failed (exit %d)" % p.returncode)
    fmt = None
    for line in p.stdout.splitlines():
        if line.startswith("libsvm"):
            fmt = "libsvm"
        elif line.startswith("numeric CSV"):
            fmt = "csv"
        m = PARSE_LINE.match(line)
        if m and fmt:
            append_csv(os.path.join(a.out, "results.csv"), RESULT_FIELDS,
                       {"commit": a.commit, "study": "etl", "case": "parse %s (memory)" % fmt,
                        "tool": "bench_parse", "threads": m.group(1), "rep": "median",
                        "params": "%d MB in memory;median of %s passes;min %s MB/s;max %s MB/s"
                                  % (a.mb, m.group(3), m.group(4), m.group(5)),
                        "bytes_per_s": num(float(m.group(2)) * 1e6)})


SCAN_LINE = re.compile(r"\s*(\d+) threads?\s*: scan\s+(\d+) MB/s \(min (\d+), max (\d+)\)\s+"
                       r"memory read\s+(\d+) MB/s")


def cmd_scan_bench(a):
    """Runs bench_scan on a binary dataset and records one row per thread
    count: the median warm scan rate, and the heap read of the same run."""
    p = subprocess.run([a.bench, a.data, str(a.reps), str(a.threads)], stdout=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        die("bench_scan failed (exit %d)" % p.returncode)
    for line in p.stdout.splitlines():
        m = SCAN_LINE.match(line)
        if m:
            append_csv(os.path.join(a.out, "results.csv"), RESULT_FIELDS,
                       {"commit": a.commit, "study": "etl", "case": "scan hgd (warm)",
                        "tool": "bench_scan", "threads": m.group(1), "rep": "median",
                        "data": a.data,
                        "params": "median of %d passes;min %s MB/s;max %s MB/s;heap read %s MB/s"
                                  % (a.reps, m.group(3), m.group(4), m.group(5)),
                        "bytes_per_s": num(float(m.group(2)) * 1e6)})


def cmd_tovw(a):
    with open(a.input) as f, open(a.output + ".tmp", "w") as o:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            label = "1" if float(parts[0]) > 0 else "-1"
            o.write(label + " | " + " ".join(parts[1:]) + "\n")
    os.replace(a.output + ".tmp", a.output)


# ---------------------------------------------------------------- report
def fnum(s):
    try:
        v = float(s)
        return v if math.isfinite(v) else None
    except (TypeError, ValueError):
        return None


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def si(v, unit=""):
    if v is None:
        return "-"
    for f, p in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= f:
            return "%.3g %s%s" % (v / f, p, unit)
    return "%.3g %s" % (v, unit) if unit else "%.3g" % v


def fmt_range(vals, unit=""):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    if len(vals) == 1:
        return si(vals[0], unit)
    return "%s (%s to %s)" % (si(statistics.median(vals), unit), si(min(vals)), si(max(vals)))


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class Limits:
    def __init__(self, rows):
        self.rows = rows

    def membw(self, threads):
        """Bytes/s of the streaming read at the largest measured thread count <= threads."""
        best = None
        for r in self.rows:
            if r["limit"] == "membw_read" and fnum(r["value"]) is not None:
                t = int(r["threads"])
                if t <= threads and (best is None or t > best[0]):
                    best = (t, fnum(r["value"]) * 1e9)
        return best[1] if best else None

    def file_read(self, kind, data):
        for r in self.rows:
            if r["limit"] == "file_read_" + kind and r["file"] == data:
                v = fnum(r["value"])
                return v * 1e9 if v is not None else None
        return None


def ratio(a, b, fmt="%.2f"):
    return fmt % (a / b) if a is not None and b else "-"


def groups(rows, key):
    out = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def col(rs, k):
    return [fnum(r[k]) for r in rs]


def md_table(header, lines):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in line) + " |" for line in lines]
    return "\n".join(out)


def scaling_rows(rows, limits):
    """Per (case, tool, threads): throughput with min and max, speedup and
    efficiency against 1 thread, the data rate against memory bandwidth."""
    lines, series = [], {}
    g = groups(rows, lambda r: (r["case"], r["tool"], int(r["threads"])))
    for (case, tool, t) in sorted(g):
        rs = g[(case, tool, t)]
        ex = med(col(rs, "examples_per_s"))
        one = g.get((case, tool, 1))
        base = med(col(one, "examples_per_s")) if one else None
        sp = ex / base if ex is not None and base else None
        bps = med(col(rs, "bytes_per_s"))
        mb = limits.membw(t)
        lines.append([case, t, len(rs), fmt_range(col(rs, "examples_per_s")),
                      si(med(col(rs, "nnz_per_s"))), "%.2fx" % sp if sp else "-",
                      "%.0f%%" % (100 * sp / t) if sp else "-",
                      si(bps, "B/s"), ratio(bps, mb, "%.3f"),
                      si(med(col(rs, "test_metric"))), si(med(col(rs, "wall_s")), "s")])
        series.setdefault(case, []).append((t, sp, ex))
    header = ["case", "threads", "runs", "examples/s median (min to max)", "non-zeros/s",
              "speedup vs 1 thread", "efficiency", "data rate", "of memory bandwidth",
              "test metric", "wall"]
    return md_table(header, lines), series


def time_to(curve, target):
    """The training seconds at which a run's test loss first reaches target,
    linear between the epochs' points; None if it never does."""
    prev = None
    for t, loss in curve:
        if loss is not None and loss <= target:
            if prev is None or prev[1] is None or prev[1] <= loss:
                return t
            return prev[0] + (t - prev[0]) * (prev[1] - target) / (prev[1] - loss)
        prev = (t, loss)
    return None


TARGET_EPOCH = 3  # the threads study's target: one thread's test loss after this many epochs


def efficiency_rows(rows, curves):
    """Per case and thread count T > 1: the time to the target test loss
    (one thread's median loss after TARGET_EPOCH epochs) against one
    thread's, and the parallel limit measured in the same rounds (T pinned
    one-thread copies at once: their summed examples/s over one thread's in
    the same round, the median of the rounds). Efficiency = speedup / limit."""
    lines, series = [], {}
    run_curve = groups(curves, lambda r: (r["case"], r["tool"], r["threads"], r["rep"]))
    for case in sorted({r["case"] for r in rows}):
        one = [c for c in curves if c["case"] == case and c["tool"] == "hogtrain" and c["threads"] == "1"
               and c["epoch"] == str(TARGET_EPOCH)]
        target = med([fnum(c["test_loss"]) for c in one])
        if target is None:
            continue

        def ttt(tool, t):
            out = []
            for (cs, tl, th, rep), pts in run_curve.items():
                if cs == case and tl == tool and th == str(t):
                    pts = sorted((fnum(p["seconds"]), fnum(p["test_loss"])) for p in pts)
                    out.append(time_to(pts, target))
            return out

        base = med(ttt("hogtrain", 1))
        ex1 = {r["rep"]: fnum(r["examples_per_s"]) for r in rows
               if r["case"] == case and r["tool"] == "hogtrain" and r["threads"] == "1"}
        for t in sorted({int(r["threads"]) for r in rows if r["case"] == case}):
            times = ttt("hogtrain", t)
            reached = [x for x in times if x is not None]
            tt = med(reached) if len(reached) * 2 > len(times) else None
            sp = base / tt if base and tt else None
            lim = [fnum(r["examples_per_s"]) / ex1[r["rep"]] for r in rows
                   if r["case"] == case and r["tool"] == "independent" and r["threads"] == str(t)
                   and ex1.get(r["rep"]) and fnum(r["examples_per_s"]) is not None]
            limit = 1.0 if t == 1 else med(lim)
            eff = sp / limit if sp and limit else None
            lines.append([case, t, "%.4g" % target, "%d of %d" % (len(reached), len(times)),
                          si(tt, "s"), "%.2fx" % sp if sp else "-",
                          "%.2fx" % limit if limit else "-", "%.2f" % eff if eff else "-"])
            series.setdefault(case + " speedup", []).append((t, sp))
            series.setdefault(case + " limit", []).append((t, limit))
    header = ["case", "threads", "target test loss", "runs reaching it", "time to target (median)",
              "speedup", "parallel limit", "efficiency"]
    return (md_table(header, lines) if lines else ""), series


def study_threads(rows, limits, curves, plots, out):
    ind = [r for r in rows if r["tool"] == "independent"]
    text, series = scaling_rows([r for r in rows if r["tool"] != "independent"], limits)
    if ind:
        eff, eseries = efficiency_rows(rows, curves)
        text += ("\n\nTime to the target test loss (one thread's after %d epochs), against the parallel "
                 "limit measured in the same rounds (as many pinned one-thread runs at once as threads):"
                 "\n\n" % TARGET_EPOCH) + eff
        plots.append(("threads-efficiency", "worker threads",
                      "time-to-target speedup, and the parallel limit (x)",
                      {k: [(t, v) for t, v in pts if v] for k, pts in eseries.items()}, True))
        curves = [c for c in curves if c["tool"] != "independent"]
    plots.append(("threads-speedup", "worker threads", "speedup over 1 thread (x)",
                  {c: [(t, s) for t, s, _ in v if s] for c, v in series.items()}, True))
    for case in sorted({r["case"] for r in curves}):
        cs = [r for r in curves if r["case"] == case and r["rep"] == "1"]
        by_t = groups(cs, lambda r: "%s thread%s" % (r["threads"], "" if r["threads"] == "1" else "s"))
        plots.append(("threads-loss-%s" % re.sub(r"[^A-Za-z0-9]+", "-", case), "training time (s)",
                      "test loss (%s)" % case,
                      {k: [(fnum(r["seconds"]), fnum(r["test_loss"])) for r in v]
                       for k, v in by_t.items()}, False))
    metric = sorted({r["metric"] for r in rows if r["metric"]})
    return text + "\n\nTest metric: %s. Loss against wall-clock per thread count: plots/threads-loss-*.png." % (
        ", ".join(metric) or "-")


def study_sparsity(rows, limits, curves, plots, out):
    text, series = scaling_rows(rows, limits)
    maxt = max(int(r["threads"]) for r in rows)
    pts = []
    for case, v in series.items():
        m = re.search(r"nnz=(\d+)", case)
        for t, s, _ in v:
            if t == maxt and s and m:
                pts.append((int(m.group(1)), s))
    plots.append(("sparsity-speedup", "non-zeros per row", "speedup on %d threads (x)" % maxt,
                  {"hogtrain": sorted(pts)}, False))
    return text


def study_size(rows, limits, curves, plots, out):
    lines, series = [], {}
    g = groups(rows, lambda r: (r["case"], int(r["threads"])))
    for (case, t) in sorted(g):
        rs = g[(case, t)]
        data = rs[0]["data"]
        bps = med(col(rs, "bytes_per_s"))
        rss = max(v for v in col(rs, "peak_rss_kb") if v is not None) if any(col(rs, "peak_rss_kb")) else None
        # the passes over the file: bytes read from the disk over its size (cold runs)
        m = re.search(r"(\d+) MiB", case)
        read = med([v for v in col(rs, "read_bytes") if v is not None]) if "read_bytes" in rs[0] else None
        size = int(m.group(1)) << 20 if m else None
        lines.append([case, t, len(rs), fmt_range(col(rs, "examples_per_s")), si(bps, "B/s"),
                      ratio(bps, limits.membw(t), "%.3f"),
                      ratio(bps, limits.file_read("warm", data), "%.2f"),
                      ratio(bps, limits.file_read("cold", data), "%.2f"),
                      si(med(col(rs, "wall_s")), "s"),
                      "%.2f" % (read / size) if read and size and "cold" in case else "-",
                      "%.0f MiB" % (rss / 1024) if rss else "-"])
        m = re.match(r"(\S+) (\d+) MiB", case)
        if m and bps:
            series.setdefault(m.group(1), []).append((int(m.group(2)), bps / 1e9))
    plots.append(("size-throughput", "data set (MiB)", "epoch data rate (GB/s)",
                  {k: sorted(v) for k, v in series.items()}, False))
    return md_table(["case", "threads", "runs", "examples/s", "data rate", "of memory bandwidth",
                     "of warm file read", "of cold file read", "wall", "bytes read / file (cold)",
                     "peak RSS"], lines)


def study_model_size(rows, limits, curves, plots, out):
    """Per model size: non-zeros/s on each thread count, against the parallel
    limit (pinned independent runs) and the memory limit of the same accesses
    (bench_model_mem), both measured in the same run; the plain loop and
    Vowpal Wabbit where measured."""
    def lim(name, t):
        vals = [fnum(r["value"]) for r in limits.rows
                if r["limit"] == name and int(r["threads"]) == t and fnum(r["value"]) is not None]
        return med(vals) if vals else None
    lines, series = [], {}
    g = groups(rows, lambda r: (r["case"], r["tool"], int(r["threads"])))
    cases = sorted({r["case"] for r in rows}, key=lambda c: int(re.search(r"2\^(\d+)", c).group(1)))
    threads = sorted({int(r["threads"]) for r in rows if r["tool"] == "hogtrain"})
    for case in cases:
        b = int(re.search(r"2\^(\d+)", case).group(1))
        hashed = " hashed" if case.endswith(" hashed") else ""  # its own limit and lines
        tag = " (hashed features)" if hashed else ""
        plain = g.get((case, "hogtrain plain", 1))
        plain_v = med(col(plain, "nnz_per_s")) if plain else None
        vw = lim("vw_2^%d" % b, 1)
        # bench_coherence before and after the size's runs: where the host put the vCPUs
        trips = [v for v in (fnum(r["value"]) for r in limits.rows
                             if r["limit"] == "core_round_trip_2^%d" % b) if v is not None]
        trip = "-" if not trips else "%.0f ns" % trips[0] if len(trips) == 1 else \
            "%.0f to %.0f ns" % (min(trips), max(trips))
        for t in threads:
            rs = g.get((case, "hogtrain", t))
            if not rs:
                continue
            v = med(col(rs, "nnz_per_s"))
            ind = g.get((case, "independent", t))
            ind_v = med(col(ind, "nnz_per_s")) if ind else None
            mem = lim("model_mem_2^%d%s" % (b, hashed), t)
            lines.append([case, t, len(rs), fmt_range(col(rs, "nnz_per_s")),
                          si(ind_v) if ind_v else "-", ratio(v, ind_v) if t > 1 else "-",
                          trip if t > 1 else "-",
                          si(mem), ratio(v, mem), si(plain_v) if t == 1 and plain_v else "-",
                          si(vw) if t == 1 and vw else "-", ratio(v, vw) if t == 1 and vw else "-",
                          si(med(col(rs, "loss")))])
            series.setdefault("hogtrain, %d thread%s%s" % (t, "" if t == 1 else "s", tag), []).append((b, v / 1e6))
            if mem:
                series.setdefault("memory limit, %d thread%s%s" % (t, "" if t == 1 else "s", tag), []).append(
                    (b, mem / 1e6))
            if ind_v and t > 1:
                series.setdefault("parallel limit, %d threads%s" % (t, tag), []).append((b, ind_v / 1e6))
        if plain_v:
            series.setdefault("hogtrain --normalized 0, 1 thread", []).append((b, plain_v / 1e6))
        if vw:
            series.setdefault("Vowpal Wabbit, 1 thread", []).append((b, vw / 1e6))
    plots.append(("model-size-nnz", "features (log2)", "non-zeros per second (millions)", series, False))
    return md_table(["case", "threads", "runs", "non-zeros/s median (min to max)", "parallel limit",
                     "of parallel limit", "cache-line round trip", "memory limit", "of memory limit",
                     "plain loop (1 thread)",
                     "vw (1 thread)", "over vw", "train loss"], lines)


def study_etl(rows, limits, curves, plots, out):
    lines, pts = [], {}
    g = groups(rows, lambda r: (r["case"], int(r["threads"])))
    for (case, t) in sorted(g):
        rs = g[(case, t)]
        data = rs[0]["data"]
        bps = med(col(rs, "bytes_per_s"))
        lines.append([case, t, len(rs), fmt_range(col(rs, "bytes_per_s"), "B/s"),
                      ratio(bps, limits.membw(t), "%.3f"),
                      ratio(bps, limits.file_read("warm", data), "%.2f"),
                      ratio(bps, limits.file_read("cold", data), "%.2f")])
        if bps:
            pts.setdefault(case, []).append((t, bps / 1e6))
    plots.append(("etl-rates", "parser threads", "input read and parsed (MB/s, log scale)", pts, "logy"))
    return md_table(["what", "threads", "runs", "input rate median (min to max)",
                     "of memory bandwidth", "of warm file read", "of cold file read"], lines)


def study_peers(rows, limits, curves, plots, out):
    lines = []
    g = groups(rows, lambda r: (r["case"], r["tool"], int(r["threads"])))
    ref = {}
    for (case, tool, t), rs in g.items():
        if tool == "hogtrain":
            ref[case] = med(col(rs, "time_to_target_s"))
    bars = {}
    for (case, tool, t) in sorted(g, key=lambda k: (k[0], k[1] != "hogtrain", k[1], k[2])):
        rs = g[(case, tool, t)]
        ttt = med(col(rs, "time_to_target_s"))
        reached = sum(1 for v in col(rs, "time_to_target_s") if v is not None)
        rss = med(col(rs, "peak_rss_kb"))
        lines.append([case, tool, t, len(rs),
                      "%s (%d of %d runs)" % (si(ttt, "s"), reached, len(rs)) if ttt is not None
                      else "not reached", ratio(ttt, ref.get(case), "%.2fx"),
                      si(med(col(rs, "train_s")), "s"), si(med(col(rs, "wall_s")), "s"),
                      si(med(col(rs, "examples_per_s"))), "%.4f" % med(col(rs, "test_metric"))
                      if med(col(rs, "test_metric")) is not None else "-",
                      "%.0f MiB" % (rss / 1024) if rss else "-"])
        if ttt is not None:
            bars.setdefault("time to target (s)", []).append(("%s %dt" % (tool, t), ttt))
    plots.append(("peers-time-to-target", "tool and threads", "time to the target test logloss (s)", bars, "bars"))
    return md_table(["data", "tool", "threads", "runs", "time to target (median)",
                     "vs hogtrain", "training time", "wall (load + train + save)",
                     "examples/s", "final test logloss", "peak RSS"], lines)


def study_replicas(rows, limits, curves, plots, out):
    lines = []
    g = groups(rows, lambda r: (r["case"], r["tool"], int(r["threads"])))
    ref = {}
    for (case, tool, t), rs in g.items():
        if tool == "replicas machine":
            ref[(case, t)] = (med(col(rs, "examples_per_s")), med(col(rs, "time_to_target_s")))
    bars = {}
    for (case, tool, t) in sorted(g, key=lambda k: (k[0], k[2], k[1] != "replicas machine", k[1])):
        rs = g[(case, tool, t)]
        ex, ttt = med(col(rs, "examples_per_s")), med(col(rs, "time_to_target_s"))
        ex0, ttt0 = ref.get((case, t), (None, None))
        reached = sum(1 for v in col(rs, "time_to_target_s") if v is not None)
        lines.append([case, tool.replace("replicas ", ""), t, len(rs), fmt_range(col(rs, "examples_per_s")),
                      ratio(ex, ex0, "%.2fx"),
                      "%s (%d of %d runs)" % (si(ttt, "s"), reached, len(rs)) if ttt is not None
                      else "not reached", ratio(ttt, ttt0, "%.2fx"),
                      "%.4f" % med(col(rs, "test_metric")) if med(col(rs, "test_metric")) is not None else "-"])
        if ttt is not None:
            bars.setdefault("time to target (s)", []).append(("%s %dt" % (tool.replace("replicas ", ""), t), ttt))
    plots.append(("replicas-time-to-target", "replicas and threads", "time to the target test logloss (s)", bars,
                  "bars"))
    return md_table(["data", "replicas", "threads", "runs", "examples/s median (min to max)", "vs machine",
                     "time to target (median)", "vs machine", "final test logloss"], lines)


def study_nodes(rows, limits, curves, plots, out):
    """Several ranks: the tables come from the study's own nodes.csv (bench/harness_nodes.py)."""
    import harness_nodes
    return harness_nodes.table(rows, limits, curves, plots, out)


# Each study's section of table.md: from its rows of results.csv, the
# limits, its curves and the run's folder (for a study's own files); it may
# add plots as (name, x label, y label, {series: points}, kind).
def study_fm(rows, limits, curves, plots, out):
    """Per tool and thread count: the best test logloss of each run's curve
    and the training time to it (medians of the runs), and the time to the
    target: the better of the peers' FFMs' median best (hogtrain's own when
    no peer's FFM ran)."""
    by_run = groups(curves, lambda c: (c["tool"], c["threads"], c["rep"]))
    best = {}
    for (tool, t, rep), cs in by_run.items():
        pts = [(fnum(c["test_loss"]), fnum(c["seconds"])) for c in cs if fnum(c["test_loss"]) is not None]
        if pts:
            best.setdefault((tool, int(t)), []).append(min(pts))
    ffm = [med([l for l, _ in v]) for (tool, _), v in best.items()
           if tool.endswith("FFM") and not tool.startswith("hogtrain")]
    own = [med([l for l, _ in v]) for (tool, _), v in best.items() if tool.startswith("hogtrain")]
    target = min(ffm) if ffm else (min(own) if own else None)
    lines = []
    for (tool, t) in sorted(best, key=lambda k: (-med([l for l, _ in best[k]]), k[1])):
        v = best[(tool, t)]
        hits = []
        for (tl, th, rep), cs in by_run.items():
            if tl == tool and int(th) == t:
                reached = sorted(fnum(c["seconds"]) for c in cs if fnum(c["test_loss"]) is not None
                                 and target is not None and fnum(c["test_loss"]) <= target + 1e-12)
                hits.append(reached[0] if reached else None)
        got = [x for x in hits if x is not None]
        lines.append([tool, t, len(v), "%.4f" % med([l for l, _ in v]), si(med([s for _, s in v]), "s"),
                      "%s (%d of %d runs)" % (si(med(got), "s"), len(got), len(hits)) if got else "not reached"])
    cs = [c for c in curves if c["rep"] == "1"]
    plots.append(("fm-loss", "training time (s)", "test logloss",
                  {"%s, %s thread%s" % (k[0], k[1], "" if k[1] == "1" else "s"):
                   [(fnum(c["seconds"]), fnum(c["test_loss"])) for c in v]
                   for k, v in groups(cs, lambda c: (c["tool"], c["threads"])).items()}, False))
    head = "Target: test logloss %s (%s).\n\n" % (
        "%.4f" % target if target is not None else "-",
        "the peers' better FFM's median best" if ffm else "hogtrain's own best: no peer's FFM ran")
    return head + md_table(["tool", "threads", "runs", "best test logloss (median)", "training time to it",
                            "time to the target"], lines)


def study_stream(rows, limits, curves, plots, out):
    """Per tool and way in (a file or a pipe): the runs' rows/s (rows over
    the command's wall time), the median of each round's ratio to the file
    run of the same round (matrix factorisation's to its own), and the peak
    RSS."""
    by_rep = {(r["case"], r["tool"], r["rep"]): r for r in rows}
    lines = []
    for (case, tool) in sorted({(r["case"], r["tool"]) for r in rows}, key=lambda k: (k[1] != "hogtrain", k)):
        rs = [r for r in rows if r["case"] == case and r["tool"] == tool]
        n = fnum(rs[0]["params"].split("=")[1])
        rate = [n / fnum(r["wall_s"]) for r in rs if fnum(r["wall_s"])]
        ratios = []
        for r in rs:
            ref = by_rep.get(("mf file" if case.startswith("mf") else "file", "hogtrain", r["rep"]))
            if ref and fnum(r["wall_s"]) and fnum(ref["wall_s"]):
                ratios.append(fnum(ref["wall_s"]) / fnum(r["wall_s"]))
        rss = [fnum(r["peak_rss_kb"]) * 1024 for r in rs if fnum(r["peak_rss_kb"])]
        lines.append(["%s, %s" % (tool, case), rs[0]["threads"], len(rs), fmt_range(rate, "rows/s"),
                      fmt_range(ratios) if ratios else "-",
                      si(med(rss), "B") if rss else "-"])
    return md_table(["tool, input", "threads", "runs", "rows/s median (min to max)",
                     "of hogtrain from the file, same round: median (min to max)", "peak RSS median"], lines)


STUDIES = {"threads": study_threads, "sparsity": study_sparsity, "size": study_size,
           "etl": study_etl, "peers": study_peers, "replicas": study_replicas, "nodes": study_nodes,
           "model-size": study_model_size, "fm": study_fm, "stream": study_stream}


# Each figure's title, by its name (or the start of it).
TITLES = [
    ("threads-speedup", "Speedup over one thread, per data set (HOGWILD!, one shared model)"),
    ("threads-loss-", "Test loss against training time, per thread count"),
    ("threads-efficiency", "Time to the target loss: speedup against the parallel limit"),
    ("sparsity-speedup", "Speedup on every core against the non-zeros per row"),
    ("size-throughput", "Epoch data rate against data set size (in memory, then out of core)"),
    ("model-size-nnz", "Non-zeros/s against model size, and the limits"),
    ("fm-loss", "Click-through models: test logloss against training time"),
    ("etl-rates", "Text read and parsed per second, per thread count"),
    ("peers-time-to-target", "Time to the target test logloss: hogtrain and its peers"),
    ("replicas-time-to-target", "Time to the target test logloss, per model replica layout"),
    ("nodes-time-to-target", "Time to the one-node test logloss, per number of ranks"),
    ("nodes-loss", "Rank 0's test logloss per epoch, per number of ranks"),
]

# Colour-blind-safe colours (Okabe and Ito), one per series or bar, and
# point shapes that tell the series apart in grey too.
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]


def title_of(name):
    for start, title in TITLES:
        if name == start or (start.endswith("-") and name.startswith(start)):
            return title + (" (%s)" % name[len(start):] if start.endswith("-") else "")
    return name


def gnuplot(out, name, xlabel, ylabel, series, kind):
    """Writes plots/NAME.dat and NAME.gp and runs gnuplot; returns the PNG's path or None."""
    pdir = os.path.join(out, "plots")
    os.makedirs(pdir, exist_ok=True)
    dat = os.path.join(pdir, name + ".dat")
    series = {k: v for k, v in series.items() if v}
    if not series:
        return None
    with open(dat, "w") as f:
        for k, pts in series.items():
            f.write("# %s\n" % k)
            for i, (x, y) in enumerate(pts):
                if kind == "bars":
                    f.write('%d "%s" %s\n' % (i, x, y))
                else:
                    f.write("%s %s\n" % (x, y))
            f.write("\n\n")
    png = os.path.join(pdir, name + ".png")
    q = lambda t: t.replace("'", "''")
    gp = ["set terminal pngcairo size 960,560 noenhanced font 'sans,11'" if pngcairo() else
          "set terminal png size 960,560 noenhanced",
          "set output '%s'" % png, "set grid lc rgb '#dddddd'", "set border 3", "set tics nomirror",
          "set title '%s' font ',13'" % q(title_of(name)),
          "set xlabel '%s'" % q(xlabel), "set ylabel '%s'" % q(ylabel)]
    gp += ["set linetype %d lc rgb '%s' lw 2 pt %d ps 1.2" % (i + 1, c, (5, 7, 9, 11, 13, 4, 6, 8)[i])
           for i, c in enumerate(COLOURS)]
    if kind == "bars":
        # one colour per bar, its label under it, turned so that long labels do not meet
        n = max(len(v) for v in series.values())
        gp += ["set style fill solid 0.8 border -1", "set boxwidth 0.6", "set yrange [0:*]",
               "set xrange [-0.6:%g]" % (n - 0.4), "set xtics rotate by -30 left", "set bmargin 6",
               "plot '%s' index 0 using 1:3:(int($1) %% %d + 1):xtic(2) with boxes lc variable notitle, "
               "'' index 0 using 1:3:(sprintf('%%.3g', $3)) with labels offset 0,0.8 notitle" % (dat, len(COLOURS))]
    else:
        # the legend outside the plot, where it covers no point
        gp.append("set key outside right top vertical Left reverse box lc rgb '#999999'")
        plots = ["'%s' index %d using 1:2 with linespoints lt %d title '%s'" % (dat, i, i % len(COLOURS) + 1, q(k))
                 for i, k in enumerate(series)]
        xs = [x for v in series.values() for x, _ in v]
        if all(float(x).is_integer() for x in xs) and max(xs) - min(xs) <= 32:
            gp.append("set xtics 1" if max(xs) - min(xs) <= 16 else "set xtics 2")  # thread counts
        if kind is True:  # speedup: the ideal line
            xs = [x for v in series.values() for x, _ in v]
            gp.append("set xrange [1:%d]" % max(max(xs), 2))
            gp.append("set yrange [0:*]")
            plots.append("x with lines dashtype 2 lc rgb '#777777' title 'ideal'")
        if kind == "logy":  # losses that blow up stay on the page
            gp.append("set logscale y")
        gp.append("plot " + ", ".join(plots))
    with open(os.path.join(pdir, name + ".gp"), "w") as f:
        f.write("\n".join(gp) + "\n")
    p = subprocess.run(["gnuplot", os.path.join(pdir, name + ".gp")], stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        print("harness.py: gnuplot %s: %s" % (name, p.stderr.strip()), file=sys.stderr)
        return None
    return png


_PNGCAIRO = None


def pngcairo():
    global _PNGCAIRO
    if _PNGCAIRO is None:
        p = subprocess.run(["gnuplot", "-e", "set terminal"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        _PNGCAIRO = "pngcairo" in p.stdout
    return _PNGCAIRO


def cmd_report(a):
    rows = read_csv(os.path.join(a.out, "results.csv"))
    limits = Limits(read_csv(os.path.join(a.out, "limits.csv")))
    curves = read_csv(os.path.join(a.out, "curves.csv"))
    notes = read_csv(os.path.join(a.out, "notes.csv"))
    out = ["# Benchmark results: %s" % os.path.basename(os.path.abspath(a.out)), ""]
    machine = os.path.join(a.out, "machine.txt")
    if os.path.exists(machine):
        with open(machine) as f:
            head = [l.rstrip() for l in f if l.startswith(("cpu:", "cores:", "numa:", "memory:", "commit:"))]
        out += ["Machine: " + "; ".join(head), ""]
    out += ["Medians of the measured repetitions (warm-up runs excluded), min to max in brackets.",
            "Raw runs: results.csv; limits: limits.csv; machine: machine.txt.", ""]
    if limits.rows:
        out += ["## Limits measured in this run", "",
                md_table(["limit", "threads", "value", "file", "how"],
                         [[r["limit"], r["threads"], (r["value"] + " " + r["unit"]) if r["value"] else "-",
                           r["file"] or "-", r["note"]] for r in limits.rows]), ""]
    have_gnuplot = shutil.which("gnuplot") is not None
    # The studies asked for, then any other whose rows one of them recorded
    # (fm measures its FFM's two threads in the threads study's terms).
    present = sorted({r["study"] for r in rows} | {n["study"] for n in notes})
    for study in (a.studies or []) + [st for st in present if st not in (a.studies or [])]:
        rs = [r for r in rows if r["study"] == study]
        out += ["## %s" % study, ""]
        cmdline = [n["note"] for n in notes if n["study"] == study and n["kind"] == "command"]
        if cmdline:
            out += ["Reproduce: `%s`" % cmdline[0], ""]
        for n in notes:
            if n["study"] == study and n["kind"] != "command":
                out.append("- %s: %s" % (n["kind"], n["note"]))
        if any(n["study"] == study and n["kind"] != "command" for n in notes):
            out.append("")
        if not rs:
            out += ["No runs recorded.", ""]
            continue
        plots = []
        out += [STUDIES[study](rs, limits, [c for c in curves if c["study"] == study], plots, a.out), ""]
        pngs = []
        if have_gnuplot:
            for name, xl, yl, series, kind in plots:
                png = gnuplot(a.out, name, xl, yl, series, kind)
                if png:
                    pngs.append(os.path.relpath(png, a.out))
            out += ["![%s](%s)" % (os.path.basename(p), p) for p in pngs] + [""]
        else:
            out += ["(no plots: gnuplot is not installed; `sh tools/install-deps.sh` installs gnuplot-nox)", ""]
    text = "\n".join(out)
    tmp = os.path.join(a.out, "table.md.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(a.out, "table.md"))
    print(text)


def cmd_note(a):
    append_csv(os.path.join(a.out, "notes.csv"), ["study", "kind", "note"],
               {"study": a.study, "kind": a.kind, "note": a.note})
    if a.kind != "command":
        print("bench: %s: %s: %s" % (a.study, a.kind, a.note), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(prog="harness.py")
    sub = ap.add_subparsers(dest="sub", required=True)
    m = sub.add_parser("measure")
    for k in ("out", "commit", "study", "case", "tool", "params", "threads", "rep"):
        m.add_argument("--" + k, required=True)
    m.add_argument("--data", default="")
    m.add_argument("--report", default="")
    m.add_argument("--bytes", type=float, default=0)
    m.add_argument("--target", type=float)
    m.add_argument("--warmup", action="store_true")
    m.add_argument("--copies", type=int, default=1,
                   help="run this many copies of a one-thread command at once, each pinned")
    m.add_argument("cmd", nargs="+")
    li = sub.add_parser("limit")
    for k in ("out", "name", "threads", "value", "unit"):
        li.add_argument("--" + k, required=True)
    li.add_argument("--file", default="")
    li.add_argument("--note", default="")
    for name in ("liblinear", "sgd", "vw"):
        p = sub.add_parser(name)
        p.add_argument("--train", required=True)
        p.add_argument("--test", required=True)
        p.add_argument("--report", required=True)
        p.add_argument("--l2", type=float, default=1e-5)
        p.add_argument("--epochs", type=int, default=10)
        p.add_argument("--eps", type=float, default=0.01)
        p.add_argument("--target", type=float)
    for name in ("libffm", "xlearn", "vwq"):
        p = sub.add_parser(name)
        for k in ("train", "test", "report"):
            p.add_argument("--" + k, required=True)
        p.add_argument("--bin", default="")
        p.add_argument("--model", default="ffm", choices=["lr", "fm", "ffm"])
        p.add_argument("--k", type=int, default=4)
        p.add_argument("--epochs", type=int, default=10)
        p.add_argument("--threads", type=int, default=1)
        p.add_argument("--step", type=float, default=0.2)
        p.add_argument("--l2", type=float, default=2e-5)
        p.add_argument("--bits", type=int, default=24)
    pb = sub.add_parser("parse-bench")
    for k in ("out", "commit", "bench"):
        pb.add_argument("--" + k, required=True)
    for k in ("mb", "reps", "threads"):
        pb.add_argument("--" + k, type=int, required=True)
    sb = sub.add_parser("scan-bench")
    for k in ("out", "commit", "bench", "data"):
        sb.add_argument("--" + k, required=True)
    for k in ("reps", "threads"):
        sb.add_argument("--" + k, type=int, required=True)
    t = sub.add_parser("tovw")
    t.add_argument("input")
    t.add_argument("output")
    r = sub.add_parser("report")
    r.add_argument("--out", required=True)
    r.add_argument("studies", nargs="*")
    n = sub.add_parser("note")
    for k in ("out", "study", "kind", "note"):
        n.add_argument("--" + k, required=True)
    a = ap.parse_args()
    {"measure": cmd_measure, "limit": cmd_limit, "liblinear": cmd_liblinear, "sgd": cmd_sgd,
     "vw": cmd_vw, "libffm": cmd_libffm, "xlearn": cmd_xlearn, "vwq": cmd_vwq, "tovw": cmd_tovw, "parse-bench": cmd_parse_bench,
     "scan-bench": cmd_scan_bench, "report": cmd_report, "note": cmd_note}[a.sub](a)


if __name__ == "__main__":
    main()
