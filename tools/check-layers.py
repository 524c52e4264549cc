#!/usr/bin/python3
# check-layers.py: fails when a file under src/ includes or calls across the layer rules of CONTRIBUTING.md, or when source files call or include each other in a loop.
# SPDX-License-Identifier: BSD-2-Clause
"""Checks the layers of src/ (stdlib only; `make check-layers` runs it).

usage: check-layers.py [--root DIR] [--build DIR] [--cflags FLAGS]

The rules are read from the ```layers block of ROOT/CONTRIBUTING.md: one line
per folder of src/, `folder: what it may use` besides itself and the public
header include/hogtrain.h. A folder name there allows that folder's private
header and functions; the word `hogtrain.h` allows the library's public
functions (those named in include/hogtrain.h) wherever they are defined,
and no private header at all: that is the command's rule.

A second block, ```forbidden, names for a folder functions of the folders
it may use that it must not call all the same: `folder: pattern ...`, each
pattern a function name or a shell-style pattern (`hog_block_ring_*`). The
trainer reads blocks through the data layer's block source, and never calls
the storage policy behind it.

Three checks, each violation printed with the files involved:
  includes  every #include of src/*/*.[ch], resolved as the compiler would
            (a quoted name next to the file first, then the -I, -iquote,
            -isystem and -idirafter folders of --cflags), names the public
            header or a file of an allowed folder; and --cflags has no
            folder from which the command could reach src/;
  calls     from the objects BUILD/src/*/*.o (nm), every symbol a file uses
            from another folder is allowed to it, and not forbidden;
  cycles    no source files call each other in a loop (the strongly connected
            components of the file call graph), and no headers include each
            other in a loop.

Exit status: 0 clean, 1 violations, 2 the check could not run (no rules,
a missing object: run make first).
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys

PUBLIC = "hogtrain.h"
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
SYMBOLS_SHOWN = 4


def die(msg):
    print("check-layers: " + msg, file=sys.stderr)
    sys.exit(2)


def read_rules(path, block="layers", required=True):
    """A block of CONTRIBUTING.md (```layers: {folder: set of what it may use};
    ```forbidden: {folder: set of patterns of functions it may not call})."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        die("cannot read the layer rules: %s" % e)
    m = re.search(r"^```" + block + r"\n(.*?)^```", text, re.M | re.S)
    if not m:
        if required:
            die("%s has no ```%s block" % (path, block))
        return {}
    rules = {}
    for line in m.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        folder, sep, uses = line.partition(":")
        if not sep:
            die("%s: layers line without a colon: %r" % (path, line))
        rules[folder.strip()] = set(uses.split())
    return rules


def public_names(header):
    """Every identifier in the public header outside comments."""
    with open(header, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return set(IDENT.findall(text))


def include_dirs(cflags, root):
    """The folders of -I, -iquote, -isystem and -idirafter in cflags: (quoted-only, both)."""
    words = cflags.split()
    quoted, both = [], []
    i = 0
    while i < len(words):
        w = words[i]
        for opt, into in (("-iquote", quoted), ("-isystem", both), ("-idirafter", both), ("-I", both)):
            if w.startswith(opt):
                d, spelled = w[len(opt):], w
                if not d and i + 1 < len(words):
                    i += 1
                    d = words[i]
                    spelled = w + " " + d
                into.append((spelled, os.path.realpath(os.path.join(root, d))))
                break
        i += 1
    return quoted, both


class Tree:
    """The files of src/: which folder each is in, and how to name them."""

    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.src = os.path.join(self.root, "src")
        self.public = os.path.join(self.root, "include", PUBLIC)
        self.files = []
        for folder in sorted(os.listdir(self.src)) if os.path.isdir(self.src) else []:
            d = os.path.join(self.src, folder)
            if os.path.isdir(d):
                self.files += [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith((".c", ".h"))]

    def rel(self, path):
        return os.path.relpath(path, self.root)

    def folder(self, path):
        """src/FOLDER/... -> FOLDER; the public header -> PUBLIC; anything else -> None."""
        if path == self.public:
            return PUBLIC
        if path.startswith(self.src + os.sep):
            parts = path[len(self.src) + 1:].split(os.sep)
            return parts[0] if len(parts) > 1 else None
        return None


def allowed_text(rules, folder):
    uses = sorted(rules.get(folder, ()))
    if not uses:
        return "%s may use nothing but %s" % (folder, PUBLIC)
    if uses == [PUBLIC]:
        return "%s may use only %s" % (folder, PUBLIC)
    return "%s may use %s and %s" % (folder, ", ".join(uses), PUBLIC)


def check_includes(tree, rules, cflags, problems):
    """Include violations into problems; returns the include graph among files of src/."""
    quoted_dirs, dirs = include_dirs(cflags, tree.root)
    graph = {}
    for path in tree.files:
        own = tree.folder(path)
        graph[path] = {}
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for no, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            search = ([os.path.dirname(path)] + [d for _, d in quoted_dirs] if kind == '"' else [])
            search += [d for _, d in dirs]
            target = next((os.path.realpath(os.path.join(d, name)) for d in search
                           if os.path.isfile(os.path.join(d, name))), None)
            if target is None:
                continue  # a system header
            where = "%s:%d" % (tree.rel(path), no)
            spelled = "%s%s%s" % (kind, name, ">" if kind == "<" else '"')
            to = tree.folder(target)
            if to is None:
                problems.append("%s includes %s (%s), outside src/ and the public header"
                                % (where, spelled, tree.rel(target)))
                continue
            if target.startswith(tree.src + os.sep):
                graph[path].setdefault(target, spelled)
            if to == PUBLIC or to == own:
                continue
            if own not in rules:
                continue  # reported once, in check_folders
            if to not in rules[own]:
                problems.append("%s includes %s (%s): %s" % (where, spelled, tree.rel(target),
                                                              allowed_text(rules, own)))
    # The command sees only include/: no -I may open src/ (or a folder above it) to it.
    if "cli" in rules and PUBLIC in rules["cli"]:
        for spelled, d in quoted_dirs + dirs:
            if d == tree.src or d.startswith(tree.src + os.sep) or tree.src.startswith(d + os.sep):
                problems.append("the flags src/ is built with have %s, which lets src/cli reach %s"
                                % (spelled, tree.rel(tree.src) + "/"))
    return graph


def check_folders(tree, rules, problems):
    for folder in sorted({tree.folder(p) for p in tree.files}):
        if folder not in rules:
            problems.append("src/%s has no line in the layer rules of CONTRIBUTING.md" % folder)
        for use in sorted(rules.get(folder, ())):
            if use != PUBLIC and use not in rules:
                problems.append("CONTRIBUTING.md: %s may use %s, which has no line of its own" % (folder, use))


def nm_symbols(obj):
    """(defined global symbols, used undefined symbols) of one object."""
    try:
        out = subprocess.run(["nm", "-P", obj], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        die("nm %s: %s" % (obj, e))
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind in ("U", "w", "v"):
            used.add(name)
        elif kind.isupper():
            defined.add(name)
    return defined, used


def check_calls(tree, rules, forbidden, build, public, problems):
    """Call violations into problems; returns the call graph among the .c files of src/."""
    sources = [p for p in tree.files if p.endswith(".c")]
    owner, uses = {}, {}
    for path in sources:
        obj = os.path.join(os.path.realpath(build), tree.rel(path))[:-2] + ".o"
        if not os.path.isfile(obj):
            die("%s is missing: build the objects first (make all)" % os.path.relpath(obj))
        defined, used = nm_symbols(obj)
        uses[path] = used
        for s in defined:
            owner.setdefault(s, path)
    graph = {}
    for path in sources:
        own = tree.folder(path)
        graph[path] = {}
        for s in sorted(uses[path]):
            to = owner.get(s)
            if to is None or to == path:
                continue
            graph[path].setdefault(to, []).append(s)
        if own not in rules:
            continue
        for to, syms in sorted(graph[path].items()):
            folder = tree.folder(to)
            banned = [s for s in syms if folder != own and
                      any(fnmatch.fnmatchcase(s, pat) for pat in forbidden.get(own, ()))]
            if banned:
                problems.append("%s calls %s: %s (forbidden to %s by CONTRIBUTING.md: %s reads blocks through "
                                "the block source)" % (tree.rel(path), tree.rel(to), shown(banned), own, own))
            if folder == own or folder in rules[own]:
                continue
            bad = [s for s in syms if not (PUBLIC in rules[own] and s in public)]
            if bad:
                problems.append("%s calls %s: %s (%s)" % (tree.rel(path), tree.rel(to), shown(bad),
                                                         allowed_text(rules, own)))
    return graph


def shown(names):
    more = len(names) - SYMBOLS_SHOWN
    return ", ".join(names[:SYMBOLS_SHOWN]) + (", and %d more" % more if more > 0 else "")


def components(graph):
    """The strongly connected components of graph with more than one node (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = counter
                    counter += 1
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on_stack.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return sorted(found)


def cycle_text(tree, kind, comp, graph):
    lines = ["%s cycle among %d files: %s" % (kind, len(comp), " ".join(tree.rel(p) for p in comp))]
    for a in comp:
        for b in sorted(graph[a]):
            if b in comp:
                how = graph[a][b]
                lines.append("    %s -> %s: %s" % (tree.rel(a), tree.rel(b),
                                                   shown(how) if isinstance(how, list) else how))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description="Checks the layers of src/ against CONTRIBUTING.md.")
    ap.add_argument("--root", default=".", help="the source tree (default .)")
    ap.add_argument("--build", default="build", help="the build folder holding src/*/*.o (default build)")
    ap.add_argument("--cflags", default="", help="the flags src/ is compiled with (for -I)")
    args = ap.parse_args()

    tree = Tree(args.root)
    if not tree.files:
        die("no files under %s" % tree.src)
    rules = read_rules(os.path.join(tree.root, "CONTRIBUTING.md"))
    forbidden = read_rules(os.path.join(tree.root, "CONTRIBUTING.md"), "forbidden", False)
    public = public_names(tree.public)
    build = os.path.join(tree.root, args.build) if not os.path.isabs(args.build) else args.build

    problems = []
    check_folders(tree, rules, problems)
    includes = check_includes(tree, rules, args.cflags, problems)
    calls = check_calls(tree, rules, forbidden, build, public, problems)
    for comp in components(includes):
        problems.append(cycle_text(tree, "include", comp, includes))

    for comp in components(calls):
        problems.append(cycle_text(tree, "call", comp, calls))

    for p in problems:
        print("check-layers: " + p)
    nfiles = len(tree.files)
    if problems:
        print("check-layers: %d violation%s in %d files of src/" % (len(problems), "" if len(problems) == 1 else "s",
                                                                  nfiles))
        return 1
    print("check-layers: %d files of src/ keep the layers of CONTRIBUTING.md, without a cycle" % nfiles)
    return 0


if __name__ == "__main__":
    sys.exit(main())
