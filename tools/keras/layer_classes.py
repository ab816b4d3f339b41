#!/usr/bin/env python3
"""Lists every class keras/src/layers exports as keras.layers.X, for gpusim's class-list test.

    python3 tools/keras/layer_classes.py KERAS_SRC > models/testdata/keras3/layer_classes.txt

KERAS_SRC is a folder holding the `keras` package (`git archive HEAD keras` of
keras-team/keras). Each output line is `EXPORTED CLASS FILE`: the name under keras.layers, the
Python class it names (what a saved config's "class_name" holds) and the source file. Exports
of functions (keras.layers.add, deserialize, Input) are left out: they are not layer classes.
Only the standard library is used: the source is parsed, not imported.
"""
import ast
import os
import sys


def exports(node):
    """The keras.layers.* names of a keras_export(...) decorator."""
    if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "keras_export"):
        return []
    names = []
    for a in node.args:
        vals = a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a]
        for v in vals:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                names.append(v.value)
    return [n[len("keras.layers."):] for n in names if n.startswith("keras.layers.")]


def main():
    root = os.path.join(sys.argv[1], "keras", "src", "layers")
    rows = set()
    for d, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".py") or f.endswith("_test.py"):
                continue
            path = os.path.join(d, f)
            tree = ast.parse(open(path, encoding="utf-8").read(), path)
            for node in ast.walk(tree):
                if not isinstance(node, ast.ClassDef):
                    continue
                for dec in node.decorator_list:
                    for name in exports(dec):
                        rows.add((name, node.name, os.path.relpath(path, sys.argv[1])))
    for r in sorted(rows):
        print(" ".join(r))


if __name__ == "__main__":
    main()
