"""OpenRLHF's own argument parser for train_ppo_ray, run apart from the trainer it starts.

openrlhf/cli/train_ppo_ray.py builds its argparse parser, parses, hierarchizes and validates the arguments inside
`if __name__ == "__main__":`, then calls train(args), which needs Ray, DeepSpeed and vLLM (not installable without a
network). This runs that block's statements exactly as written, from the source file given, up to train(args): the
parser's declarations, parse_args on the given argv, hierarchize (openrlhf/utils/config.py, loaded from the same
source tree) and every validation after it. Only the final train(args) (and ModelScope's hub patch, for --use_ms) is
left out.

  python3 openrlhf_parser.py declarations SOURCE_ROOT            # every flag as argparse declares it, as JSON
  python3 openrlhf_parser.py parse SOURCE_ROOT -- ARG...          # the parsed, validated args as JSON; argparse's
                                                                  # own error and exit status 2 on a bad command
SOURCE_ROOT is a checkout of OpenRLHF (the folder holding openrlhf/).
"""

import argparse
import ast
import importlib.util
import json
import os
import sys
import types
from datetime import datetime

CLI_FILE = "openrlhf/cli/train_ppo_ray.py"
CONFIG_FILE = "openrlhf/utils/config.py"


def main_block(root):
    """The statements of train_ppo_ray.py's `if __name__ == "__main__":` block, less train(args) and --use_ms."""
    path = os.path.join(root, CLI_FILE)
    tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'":
            body = []
            for stmt in node.body:
                text = ast.unparse(stmt)
                if text == "train(args)" or text.startswith("if args.use_ms:"):
                    continue
                body.append(stmt)
            return ast.Module(body=body, type_ignores=[]), path
    raise SystemExit(f"{path}: no `if __name__ == '__main__':` block")


def install_config_module(root):
    """openrlhf.utils.config from the source tree, as a module of its own (the package's __init__ imports torch)."""
    for name in ("openrlhf", "openrlhf.utils"):
        sys.modules.setdefault(name, types.ModuleType(name))
    spec = importlib.util.spec_from_file_location("openrlhf.utils.config", os.path.join(root, CONFIG_FILE))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["openrlhf.utils.config"] = module


def run(root, argv, stop_after_parser=False):
    """Runs the block with sys.argv = argv; returns its namespace (parser, args)."""
    module, path = main_block(root)
    if stop_after_parser:
        # The statements that build the parser: everything before `args = parser.parse_args()`.
        cut = next(i for i, s in enumerate(module.body) if ast.unparse(s) == "args = parser.parse_args()")
        module.body = module.body[:cut]
    install_config_module(root)
    scope = {"argparse": argparse, "os": os, "datetime": datetime, "__name__": "__main__"}
    sys.argv = [path, *argv]
    exec(compile(module, path, "exec"), scope)
    return scope


def declarations(parser):
    """Every option as argparse holds it: switch (store_true / store_false) or a value with its nargs, type, choices."""
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        for flag in action.option_strings:
            if isinstance(action, argparse._StoreTrueAction):
                d = {"action": "store_true", "dest": action.dest}
            elif isinstance(action, argparse._StoreFalseAction):
                d = {"action": "store_false", "dest": action.dest}
            else:
                d = {"action": "store", "dest": action.dest}
                if action.nargs is not None:
                    d["nargs"] = action.nargs
                if action.type is not None:
                    d["type"] = action.type.__name__
                if action.choices is not None:
                    d["choices"] = list(action.choices)
            out[flag] = d
    return dict(sorted(out.items()))


def plain(x):
    if isinstance(x, types.SimpleNamespace):
        return {k: plain(v) for k, v in vars(x).items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, float) and x != x:
        return "nan"
    if isinstance(x, float) and x in (float("inf"), float("-inf")):
        return str(x)
    return x


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("declarations", "parse"):
        raise SystemExit(__doc__)
    command, root = sys.argv[1], sys.argv[2]
    if command == "declarations":
        print(json.dumps(declarations(run(root, [], stop_after_parser=True)["parser"]), indent=1))
    else:
        rest = sys.argv[3:]
        if rest[:1] == ["--"]:
            rest = rest[1:]
        print(json.dumps(plain(run(root, rest)["args"]), indent=1))
