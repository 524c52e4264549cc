#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""harness_nodes.py: the nodes study's runs (several hogtrain ranks at once, one killed on cue, each in a network namespace of its own when asked) and its tables and summary.

Subcommands (bench/studies/nodes.sh calls them; run with /usr/bin/python3):
  run      one configuration: N ranks of `hogtrain train` (rank 0 in front,
           evaluating the test set), or with --independent N one-node runs at
           once; appends a row to results.csv, one to nodes.csv (the link's
           figures from rank 0's report) and rank 0's curve to curves.csv.
           A rank that fails is recorded, not fatal: the tables count it.
  limits   the machine's parallel limit per N, from the independent runs,
           into limits.csv
  summary  the issue's targets, met or missed, in a few lines on stdout
harness.py report calls table() for the nodes section of table.md.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

import harness as h

NODE_FIELDS = ["case", "ranks", "rep", "network", "epochs", "ref_epochs", "target", "ok", "exits",
               "live", "dead_rank", "killed_rank", "killed_at_epoch", "epochs_to_target", "best_epoch",
               "best_loss", "last_epoch_loss", "final_loss", "time_to_target_s", "wall_to_target_s", "train_s", "wall_s",
               "examples_per_s", "chunks_sent", "chunks_received", "deltas_sent", "deltas_received",
               "dropped", "stale", "bytes_sent", "bytes_per_update", "bytes_per_s", "link_cpu_share",
               "staleness_mean", "staleness_max", "link_rate"]
EPOCH_LINE = re.compile(rb"^epoch (\d+)/(\d+) ")


# ---------------------------------------------------------------- run
class Rank:
    """One hogtrain process: its output goes to a log through a thread that
    notes when each "epoch K/E" line arrived and, on cue, kills the process."""

    def __init__(self, cmd, log, t0, kill_epoch=None):
        self.t0, self.kill_epoch = t0, kill_epoch
        self.epoch_at = {}  # epoch -> seconds since t0 when its line arrived
        self.killed_at = None
        self.rc = None
        self.rss_kb = 0
        self.log = open(log, "wb")
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        for line in self.p.stdout:
            now = time.monotonic() - self.t0
            self.log.write(line)
            m = EPOCH_LINE.match(line)
            if not m:
                continue
            e = int(m.group(1))
            self.epoch_at.setdefault(e, now)
            if self.kill_epoch is not None and e >= self.kill_epoch and self.killed_at is None:
                self.killed_at = e
                self.p.kill()  # SIGKILL: no goodbye to the other ranks

    def kill(self):
        if self.rc is None:
            try:
                self.p.kill()
            except OSError:
                pass

    def wait(self):
        # wait4 rather than Popen.wait: the rank's own peak RSS comes with it.
        _, status, ru = os.wait4(self.p.pid, 0)
        self.rc = self.p.returncode = os.waitstatus_to_exitcode(status)
        self.rss_kb = ru.ru_maxrss
        self.reader.join()
        self.log.close()


def launch_all(cmds, logs, timeout, kill=None):
    """Starts the commands (the last in front is rank 0: the others first, as
    a launcher would), waits for all, kills all past timeout seconds.
    kill: (index, epoch). Returns the Rank objects and the wall seconds."""
    t0 = time.monotonic()
    ranks = []
    try:
        for i, (cmd, log) in enumerate(zip(cmds, logs)):
            ke = kill[1] if kill and kill[0] == i else None
            ranks.append(Rank(cmd, log, t0, ke))
        timer = threading.Timer(timeout, lambda: [r.kill() for r in ranks])
        timer.start()
        for r in ranks:
            r.wait()
        timer.cancel()
    finally:
        for r in ranks:
            r.kill()
    return ranks, time.monotonic() - t0


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def mean(vals):
    vals = [v for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else None


def cmd_run(a):
    tmp = os.path.join(a.out, "tmp")
    train_opts = a.opts
    if train_opts and train_opts[0] == "--":
        train_opts = train_opts[1:]
    n = a.independent or a.nodes
    a.params = ";".join(p for p in (a.params, " ".join(train_opts)) if p)
    cmds, logs, reports = [], [], []
    for r in range(n):
        report = os.path.join(tmp, "nodes-%d.json" % r)
        if os.path.exists(report):
            os.unlink(report)
        cmd = [a.hogtrain, "train", a.train, "-o", os.path.join(tmp, "nodes-%d.hog" % (r if a.independent else 0))]
        cmd += train_opts
        if a.independent:
            cmd += ["--report", report, "-q"]
        else:
            if r == 0:
                cmd += ["--test", a.test, "--report", report]
            if n > 1:
                if a.netns:
                    cmd = ["ip", "netns", "exec", "%s%d" % (a.netns, r)] + cmd
                cmd += ["--nodes", str(n), "--node-rank", str(r), "--coordinator", "%s:%d" % (a.host, a.port),
                        "--secret", a.secret]
        cmds.append(cmd)
        logs.append(os.path.join(tmp, "nodes-%s-%d.log" % ("ind" if a.independent else "rank", r)))
        reports.append(report)
    # Rank 0 last, so that it finds the others already asking to join.
    order = list(range(n - 1, -1, -1)) if not a.independent else list(range(n))
    kill = (order.index(a.kill_rank), a.kill_epoch) if a.kill_rank is not None else None
    ranks, wall = launch_all([cmds[i] for i in order], [logs[i] for i in order], a.timeout, kill)
    by_rank = {order[i]: ranks[i] for i in range(n)}
    exits = [by_rank[r].rc for r in range(n)]
    rss = max(r.rss_kb for r in ranks)
    if a.independent:
        record_independent(a, n, exits, wall, rss, [read_json(p) for p in reports])
        return
    record_ranks(a, n, exits, wall, rss, read_json(reports[0]), by_rank, logs)


def record_independent(a, n, exits, wall, rss, reps):
    ok = all(rc == 0 for rc in exits) and all(reps)
    secs = [r.get("train_seconds") for r in reps if r]
    ex = [r.get("examples") for r in reps if r]
    slowest = max(secs) if ok and secs else None
    rate = sum(ex) / slowest if slowest else None
    h.append_csv(os.path.join(a.out, "results.csv"), h.RESULT_FIELDS,
                 {"commit": a.commit, "study": "nodes", "case": a.case, "tool": "hogtrain",
                  "params": a.params, "data": os.path.basename(a.train), "threads": n, "rep": a.rep,
                  "wall_s": h.num(wall), "train_s": h.num(slowest), "examples_per_s": h.num(rate),
                  "peak_rss_kb": rss or ""})
    h.append_csv(os.path.join(a.out, "nodes.csv"), NODE_FIELDS,
                 {"case": a.case, "ranks": n, "rep": a.rep, "network": "-", "ok": int(ok),
                  "exits": " ".join(str(e) for e in exits), "train_s": h.num(slowest),
                  "wall_s": h.num(wall), "examples_per_s": h.num(rate)})
    print("  nodes %s x%d, rep %s: %s; slowest %s s training, %.3g s wall" % (
        a.case, n, a.rep, "ok" if ok else "FAILED (exits %s)" % exits, h.num(slowest), wall), file=sys.stderr)


def record_ranks(a, n, exits, wall, rss, rep, by_rank, logs):
    killed = by_rank[a.kill_rank] if a.kill_rank is not None else None
    ok = rep is not None and all(rc == 0 for r, rc in enumerate(exits) if r != a.kill_rank)
    nodes = (rep or {}).get("nodes") or {}
    total = nodes.get("total") or {}
    losses = (rep or {}).get("epoch_test_loss") or []
    cum, t = [], 0.0
    for s in (rep or {}).get("epoch_seconds") or []:
        t += s or 0.0
        cum.append(t)
    hit = next((e for e, loss in enumerate(losses, 1) if loss is not None and loss <= a.target), None) \
        if a.target is not None else None
    best = min(((loss, e) for e, loss in enumerate(losses, 1) if loss is not None), default=(None, None))
    final = ((rep or {}).get("test") or {}).get("logloss")
    ttt = cum[hit - 1] if hit and hit <= len(cum) else None
    wtt = by_rank[0].epoch_at.get(hit) if hit else None
    train_s = (rep or {}).get("train_seconds")
    rate = total.get("examples_per_s") if n > 1 else (rep or {}).get("examples_per_s")
    shares = [r.get("link_cpu_share") for r in nodes.get("ranks") or []]
    row = {"commit": a.commit, "study": "nodes", "case": a.case, "tool": "hogtrain", "params": a.params,
           "data": os.path.basename(a.train), "threads": n, "rep": a.rep, "wall_s": h.num(wall),
           "train_s": h.num(train_s), "examples_per_s": h.num(rate),
           "nnz_per_s": h.num((rep or {}).get("nnz_per_s")) if n == 1 else "",
           "loss": h.num((rep or {}).get("train_loss")), "test_metric": h.num(final),
           "metric": "test_logloss" if final is not None else "", "time_to_target_s": h.num(ttt),
           "peak_rss_kb": rss or ""}
    h.append_csv(os.path.join(a.out, "results.csv"), h.RESULT_FIELDS, row)
    for e, (loss, secs) in enumerate(zip(losses, cum), 1):
        h.append_csv(os.path.join(a.out, "curves.csv"), h.CURVE_FIELDS,
                     {"study": "nodes", "case": a.case, "tool": "hogtrain", "threads": n, "rep": a.rep,
                      "epoch": e, "seconds": h.num(secs), "test_loss": h.num(loss)})
    # Each rank's bytes over its own training seconds (examples / examples_per_s).
    sent_rates = [r["bytes_sent"] * r["examples_per_s"] / r["examples"] for r in nodes.get("ranks") or []
                  if r.get("examples") and r.get("examples_per_s")]
    h.append_csv(os.path.join(a.out, "nodes.csv"), NODE_FIELDS, {
        "case": a.case, "ranks": n, "rep": a.rep, "network": a.network, "epochs": len(losses) or "",
        "ref_epochs": a.ref_epochs, "target": h.num(a.target), "ok": int(ok),
        "exits": " ".join(str(e) for e in exits), "live": nodes.get("live", ""),
        "dead_rank": nodes.get("dead_rank", ""), "killed_rank": a.kill_rank if killed else "",
        "killed_at_epoch": killed.killed_at if killed and killed.killed_at else "",
        "epochs_to_target": hit or "", "best_epoch": best[1] or "", "best_loss": h.num(best[0]),
        "last_epoch_loss": h.num(losses[-1] if losses else None),
        "final_loss": h.num(final), "time_to_target_s": h.num(ttt), "wall_to_target_s": h.num(wtt),
        "train_s": h.num(train_s), "wall_s": h.num(wall), "examples_per_s": h.num(rate),
        **{k: total.get(k, "") for k in ("chunks_sent", "chunks_received", "deltas_sent", "deltas_received",
                                         "dropped", "stale", "bytes_sent")},
        "bytes_per_update": h.num(total.get("bytes_per_update")),
        "bytes_per_s": h.num(mean(sent_rates)),
        "link_cpu_share": h.num(mean(shares)), "staleness_mean": h.num(total.get("staleness_mean")),
        "staleness_max": h.num(total.get("staleness_max")), "link_rate": a.link_rate})
    what = "ok" if ok else "FAILED (exits %s; logs %s)" % (exits, os.path.dirname(logs[0]))
    print("  nodes %s, %d rank%s, rep %s: %s, %.3g s wall, test logloss %s, target %s" % (
        a.case, n, "s" if n > 1 else "", a.rep, what, wall, h.num(final, "%.4f") or "-",
        "at epoch %d" % hit if hit else "not reached"), file=sys.stderr)
    if not ok:
        for i, log in enumerate(logs):
            if os.path.exists(log):
                tail = open(log, errors="replace").read().splitlines()[-3:]
                for line in tail:
                    print("    rank %d: %s" % (i, line), file=sys.stderr)


# ---------------------------------------------------------------- figures
def figures(out):
    """The study's medians per (case, ranks), from nodes.csv."""
    rows = h.read_csv(os.path.join(out, "nodes.csv"))
    g = h.groups(rows, lambda r: (r["case"], int(r["ranks"])))
    f = {}
    for key, rs in g.items():
        good = [r for r in rs if r["ok"] == "1"]
        d = {"runs": len(rs), "ok": len(good)}
        for k in ("epochs_to_target", "best_loss", "last_epoch_loss", "final_loss", "time_to_target_s", "wall_to_target_s",
                  "train_s", "examples_per_s", "chunks_sent", "chunks_received", "deltas_sent", "dropped",
                  "stale", "bytes_per_update", "bytes_per_s", "link_cpu_share", "staleness_mean",
                  "staleness_max", "live", "killed_at_epoch", "best_epoch"):
            d[k] = h.med(h.col(good, k))
        d["reached"] = sum(1 for v in h.col(good, "epochs_to_target") if v is not None)
        d["dead"] = sorted({r["dead_rank"] for r in rs if r["dead_rank"]})
        d["target"] = h.med(h.col(rs, "target"))
        d["ref_epochs"] = h.med(h.col(rs, "ref_epochs"))
        d["epochs"] = h.med(h.col(rs, "epochs"))
        d["network"] = sorted({r["network"] for r in rs})
        d["rows"] = rs
        f[key] = d
    return f


def parallel_limit(f, n):
    one, many = f.get(("independent", 1)), f.get(("independent", n))
    if n == 1:
        return 1.0
    if not one or not many or not one["train_s"] or not many["train_s"]:
        return None
    return n * one["train_s"] / many["train_s"]


def paired_ratio(f, case, ref):
    """Median over repetitions of case's final test loss over ref's in the same repetition."""
    a, b = f.get(case), f.get(ref)
    if not a or not b:
        return None
    refs = {r["rep"]: h.fnum(r["final_loss"]) for r in b["rows"] if r["ok"] == "1"}
    return h.med([h.fnum(r["final_loss"]) / refs[r["rep"]] for r in a["rows"]
                  if r["ok"] == "1" and refs.get(r["rep"]) and h.fnum(r["final_loss"]) is not None])


def cmd_limits(a):
    f = figures(a.out)
    reps = f.get(("independent", 1), {}).get("ok", 0)
    for n in sorted(k[1] for k in f if k[0] == "independent" and k[1] > 1):
        lim = parallel_limit(f, n)
        h.append_csv(os.path.join(a.out, "limits.csv"), h.LIMIT_FIELDS, {
            "limit": "parallel_runs", "threads": n, "value": h.num(lim, "%.3f"), "unit": "x",
            "note": "%d independent one-thread one-node hogtrain runs at once: %d x the training seconds "
                    "of one alone over the slowest's, medians of %d" % (n, n, reps)})


def ratio_text(v, fmt="%.2fx"):
    return fmt % v if v is not None else "-"


def f4(v):
    return "%.4f" % v if v is not None else "-"


def epochs_cell(d):
    e, ref = d["epochs_to_target"], d["ref_epochs"]
    if d["reached"]:
        return "%g (%.2fx; %d of %d runs)" % (e, e / ref if ref else float("nan"), d["reached"], d["runs"])
    if d["best_loss"] is None:
        return "no run completed (%d of %d)" % (d["ok"], d["runs"])
    return "not in %g (best %.4f at epoch %g, %.3fx the target)" % (
        d["epochs"] or 0, d["best_loss"], d["best_epoch"] or 0, d["best_loss"] / d["target"])


def table(rows, limits, curves, plots, out):
    f = figures(out)
    one = f.get(("one node", 1))
    if not one:
        return "No one-node run recorded."
    target, ref = one["target"], one["ref_epochs"]
    parts = ["Target: test logloss %.4f, one node after %g epochs; a rank's epoch is a pass over its share "
             "(1/N) of the rows." % (target, ref), ""]

    lines = []
    for sync in ("one node", "async", "average"):
        for n in (1, 2, 4):
            d = f.get((sync, n))
            if not d:
                continue
            lines.append([sync, n, d["runs"], epochs_cell(d), "%s (%s)" % (f4(d["final_loss"]), f4(d["last_epoch_loss"])),
                          "%.1f (max %g)" % (d["staleness_mean"], d["staleness_max"])
                          if d["staleness_mean"] is not None and d["chunks_sent"] else "-",
                          h.si(d["chunks_sent"]) if n > 1 else "-", h.si(d["dropped"]) if n > 1 else "-",
                          "%.1f%%" % (100 * d["link_cpu_share"]) if d["link_cpu_share"] is not None and n > 1 else "-"])
    parts += ["### Epochs to the one-node test loss (target: at most 1.2x)", "",
              h.md_table(["sync", "ranks", "runs", "epochs to the target (ratio to one node's)",
                          "final test logloss (rank 0's at its last epoch)", "staleness mean (max)", "chunks sent", "messages dropped",
                          "link CPU per rank"], lines), ""]

    fa, clean = f.get(("faults", 4)), f.get(("async", 4))
    if fa:
        done = sum(1 for r in fa["rows"] if r["ok"] == "1" and r["live"] == "3")
        killed = sorted({r["killed_at_epoch"] for r in fa["rows"] if r["killed_at_epoch"]})
        lines = [["faults", fa["runs"], "%d of %d" % (done, fa["runs"]), f4(fa["final_loss"]),
                  f4(clean["final_loss"]) if clean else "-", ratio_text(paired_ratio(f, ("faults", 4), ("async", 4)), "%.3fx"),
                  ratio_text(fa["final_loss"] / target if fa["final_loss"] else None, "%.3fx"),
                  ", ".join(fa["dead"]) or "-", ", ".join(killed) or "-", h.si(fa["dropped"])]]
        parts += ["### Faults: 4 ranks, 10% of chunk messages dropped, rank 2 killed at half time (target: "
                  "completes with 3 live ranks, final test logloss within 5% of the clean run's)", "",
                  h.md_table(["case", "runs", "completed (exit 0, live 3)", "final test logloss",
                              "clean 4-rank run", "vs clean (same repetition)", "vs one node", "dead rank",
                              "killed at its epoch", "messages dropped"], lines), ""]

    lines, bars = [], {}
    base = one["time_to_target_s"]
    for sync in ("one node", "async", "average"):
        for n in (1, 2, 4):
            d = f.get((sync, n))
            if not d:
                continue
            ttt = d["time_to_target_s"] if d["reached"] else None
            sp = base / ttt if base and ttt else None
            lim = parallel_limit(f, n)
            lines.append([sync, n, d["runs"], "%s (%d of %d runs)" % (h.si(ttt, "s"), d["reached"], d["runs"])
                          if ttt is not None else "not reached",
                          h.si(d["wall_to_target_s"], "s") if ttt is not None else "-",
                          ratio_text(sp), ratio_text(lim), "%.0f%%" % (100 * sp / lim) if sp and lim else "-"])
            if ttt is not None:
                bars.setdefault("time to target (s)", []).append(("%s %d" % (sync, n), ttt))
    plots.append(("nodes-time-to-target", "ranks", "training time to the one-node test logloss (s)", bars, "bars"))
    parts += ["### Wall time to the target loss, against the machine's parallel limit", "",
              h.md_table(["sync", "ranks", "runs", "rank 0's training time to the target (median)",
                          "wall clock from launch", "speedup vs one node", "parallel limit (N runs at once)",
                          "efficiency (speedup / limit)"], lines), ""]

    lines = []
    for case in sorted((k for k in f if k[0].startswith("rate ")), key=lambda k: (k[1], h.fnum(
            f[k]["rows"][0]["link_rate"]) or 0)):
        d = f[case]
        lines.append([case[0][5:], case[1], d["runs"], h.si(d["bytes_per_update"], "B"), h.si(d["bytes_per_s"], "B/s"),
                      "%.1f%%" % (100 * d["link_cpu_share"]) if d["link_cpu_share"] is not None else "-",
                      h.si(d["chunks_sent"]), h.si(d["deltas_sent"]), h.si(d["dropped"]),
                      "%.1f" % d["staleness_mean"] if d["staleness_mean"] is not None and d["chunks_sent"] else "-",
                      "%g (%d of %d runs)" % (d["epochs_to_target"], d["reached"], d["runs"]) if d["reached"]
                      else "not in %g" % (d["epochs"] or 0), f4(d["final_loss"])])
    if lines:
        parts += ["### Bytes on the wire and the link thread's CPU against --link-rate", "",
                  h.md_table(["--link-rate", "ranks", "runs", "bytes per update", "bytes sent per training second per rank",
                              "link CPU per rank", "chunks sent", "changes sent", "messages dropped",
                              "staleness mean", "epochs to the target", "final test logloss"], lines), ""]
    parts.append("Training time: rank 0's epoch_seconds summed up to its first epoch at or below the target; "
                 "wall clock: from starting the ranks to that epoch's line. Final test logloss: the model "
                 "rank 0 gathers at the end. Link figures: the report's totals over ranks (bytes per update: "
                 "bytes sent per chunk or change message); link CPU: the link thread's CPU seconds over the "
                 "rank's training seconds, the ranks' mean. Curves: plots/nodes-loss.png (repetition 1).")

    series = {}
    for c in curves:
        if c["rep"] == "1" and (c["case"] in ("one node", "async", "average")):
            series.setdefault("%s %s" % (c["case"], c["threads"]), []).append(
                (int(c["epoch"]), h.fnum(c["test_loss"])))
    last = max((e for v in series.values() for e, _ in v), default=0)
    if last:
        series["target"] = [(1, target), (last, target)]
    plots.append(("nodes-loss", "epoch (a pass over the rank's share)", "rank 0's test logloss", series, "logy"))
    return "\n".join(parts)


# ---------------------------------------------------------------- summary
def cmd_summary(a):
    f = figures(a.out)
    one = f.get(("one node", 1))
    if not one:
        print("nodes: no one-node run recorded")
        return
    target, ref = one["target"], one["ref_epochs"]
    say = lambda s: print("nodes: " + s)
    say("target test logloss %.4f (one node, %g epochs); network: %s" % (
        target, ref, ", ".join(sorted({n for d in f.values() for n in d["network"] if n != "-"})) or "-"))
    for sync in ("async", "average"):
        for n in (2, 4):
            d = f.get((sync, n))
            if not d:
                continue
            link = "staleness mean %s, %s messages dropped" % (
                "%.1f" % d["staleness_mean"] if d["staleness_mean"] is not None and d["chunks_sent"] else "-",
                h.si(d["dropped"]))
            if d["reached"]:
                r = d["epochs_to_target"] / ref
                say("%s %d ranks: target at epoch %g of %g (%.2fx one node's; target <= 1.2x): %s" % (
                    sync, n, d["epochs_to_target"], d["epochs"] or 0, r, "met" if r <= 1.2 else "MISSED"))
            else:
                say("%s %d ranks: %s: MISSED" % (sync, n, epochs_cell(d)))
            fl = d["final_loss"]
            say("  final model's test logloss %s (%s the target; rank 0's at its last epoch %s); %s%s" % (
                f4(fl), ratio_text(fl / target if fl else None, "%.3fx"), f4(d["last_epoch_loss"]), link,
                "; DIVERGES after reaching the target" if d["reached"] and fl and fl > 1.05 * target else ""))
    fa = f.get(("faults", 4))
    if fa:
        done = sum(1 for r in fa["rows"] if r["ok"] == "1" and r["live"] == "3")
        pr = paired_ratio(f, ("faults", 4), ("async", 4))
        clean = f.get(("async", 4))
        say("faults: %d of %d runs completed with 3 live ranks; final test logloss %s, %s the clean 4-rank run's "
            "(%s; target within 5%%): %s; %s one node's" % (
                done, fa["runs"], f4(fa["final_loss"]), ratio_text(pr, "%.3fx"), f4(clean["final_loss"] if clean else None),
                "met" if done == fa["runs"] and pr is not None and abs(pr - 1) <= 0.05 else "MISSED",
                ratio_text(fa["final_loss"] / target if fa["final_loss"] else None, "%.3fx")))
    base = one["time_to_target_s"]
    for sync in ("async", "average"):
        parts = []
        for n in (2, 4):
            d = f.get((sync, n))
            if not d:
                continue
            ttt = d["time_to_target_s"] if d["reached"] else None
            sp = base / ttt if base and ttt else None
            lim = parallel_limit(f, n)
            parts.append("%d ranks %s (speedup %s, limit %s, efficiency %s)" % (
                n, h.si(ttt, "s") if ttt else "not reached", ratio_text(sp), ratio_text(lim),
                "%.0f%%" % (100 * sp / lim) if sp and lim else "-"))
        if parts:
            say("time to target, %s: one node %s; %s" % (sync, h.si(base, "s"), "; ".join(parts)))
    rates = sorted((k for k in f if k[0].startswith("rate ")), key=lambda k: (k[1], h.fnum(
        f[k]["rows"][0]["link_rate"]) or 0))
    for k in rates:
        d = f[k]
        say("link %s, %d ranks: %s per update, %s per training second, link CPU %s per rank; staleness mean %s; "
            "final test logloss %s after %g epochs" % (
                k[0][5:], k[1], h.si(d["bytes_per_update"], "B"), h.si(d["bytes_per_s"], "B"),
                "%.1f%%" % (100 * d["link_cpu_share"]) if d["link_cpu_share"] is not None else "-",
                "%.1f" % d["staleness_mean"] if d["staleness_mean"] is not None else "-", f4(d["final_loss"]),
                d["epochs"] or 0))
    bad = sum(d["runs"] - d["ok"] for k, d in f.items() if k[0] != "faults")
    if bad:
        say("%d run(s) failed: see the lines above and %s" % (bad, os.path.join(a.out, "nodes.csv")))


def main():
    ap = argparse.ArgumentParser(prog="harness_nodes.py")
    sub = ap.add_subparsers(dest="sub", required=True)
    r = sub.add_parser("run")
    for k in ("out", "commit", "case", "rep", "hogtrain", "train"):
        r.add_argument("--" + k, required=True)
    r.add_argument("--params", default="", help="what the case is; the train options are added")
    r.add_argument("--test", default="")
    r.add_argument("--secret", default="")
    r.add_argument("--nodes", type=int, default=1)
    r.add_argument("--independent", type=int, default=0, help="N one-node runs at once instead of ranks")
    r.add_argument("--port", type=int, default=0)
    r.add_argument("--netns", default="", help="rank R runs in network namespace NETNS+R")
    r.add_argument("--host", default="127.0.0.1", help="rank 0's address")
    r.add_argument("--network", default="loopback")
    r.add_argument("--target", type=float)
    r.add_argument("--ref-epochs", type=int, default=0)
    r.add_argument("--kill-rank", type=int)
    r.add_argument("--kill-epoch", type=int)
    r.add_argument("--link-rate", default="")
    r.add_argument("--timeout", type=float, default=600)
    r.add_argument("opts", nargs=argparse.REMAINDER, help="-- hogtrain train options every rank gets")
    for name in ("limits", "summary"):
        s = sub.add_parser(name)
        s.add_argument("--out", required=True)
    a = ap.parse_args()
    {"run": cmd_run, "limits": cmd_limits, "summary": cmd_summary}[a.sub](a)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # children are killed on the way out
    main()
