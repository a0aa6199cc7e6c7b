# The lab's task verifiers (src/tasks/) in Python, for the reward functions of exports to TRL, verl and OpenRLHF:
# the same prompt parsing, guard rails (empty, overlong, foreign characters) and reward parts as the TypeScript
# ones, so a completion scores the same on a cluster as in the lab. Standard library only. Not the task
# generators: prompts come from the export's data files. scripts/check-python-verifiers.ts checks the two agree.
import re
from fractions import Fraction

COPY_LETTERS = "abcdef"
COUNT_LETTERS = "abcd"
BANDIT_PROMPT = "pick:"
BANDIT_ARMS = "ABCDEFGH"
MAX_EXPRESSION_LENGTH = 256
MAX_EXPRESSION_DEPTH = 32


def _natural_format(s):
    if not re.fullmatch(r"[0-9]+", s):
        return False
    return bool(re.fullmatch(r"0|[1-9][0-9]*", s))


def _exact_match(expected, completion, format_ok, align="left"):
    """accuracy, format and positions (characters matched position by position) as src/tasks/task.ts exactMatch."""
    n = max(len(expected), len(completion))
    same = 0
    for i in range(n):
        if align == "left":
            e = expected[i] if i < len(expected) else None
            c = completion[i] if i < len(completion) else None
        else:
            ei, ci = len(expected) - n + i, len(completion) - n + i
            e = expected[ei] if ei >= 0 else None
            c = completion[ci] if ci >= 0 else None
        if e is not None and e == c:
            same += 1
    positions = 0 if n == 0 else same / n
    if not format_ok:
        return {"accuracy": 0, "format": 0, "positions": positions}
    return {"accuracy": 1 if completion == expected else 0, "format": 1, "positions": positions}


# ---------------------------------------------------------------------------------------------------------
# Countdown: exact rationals, the grammar of src/tasks/expression.ts (no unary minus, no leading zeros).


class _ParseError(Exception):
    pass


def _lex(src):
    tokens = []
    i = 0
    while i < len(src):
        c = src[i]
        if c == " ":
            i += 1
        elif "0" <= c <= "9":
            j = i
            while j < len(src) and "0" <= src[j] <= "9":
                j += 1
            text = src[i:j]
            if len(text) > 1 and text[0] == "0":
                raise _ParseError("leading zero")
            if j < len(src) and src[j] == ".":
                raise _ParseError("decimal")
            tokens.append(("num", int(text)))
            i = j
        elif c in "+-*/()":
            tokens.append((c, None))
            i += 1
        else:
            raise _ParseError("unexpected character")
    return tokens


def _parse_expression(src):
    """(value or None for division by zero, numbers used) or None when src is not an expression."""
    if len(src) > MAX_EXPRESSION_LENGTH:
        return None
    try:
        tokens = _lex(src)
    except _ParseError:
        return None
    if not tokens:
        return None
    pos = [0]
    depth = [0]
    numbers = []

    def peek():
        return tokens[pos[0]] if pos[0] < len(tokens) else None

    def factor():
        t = peek()
        if t is None:
            raise _ParseError("ended")
        if t[0] == "num":
            pos[0] += 1
            numbers.append(t[1])
            return ("num", t[1])
        if t[0] == "(":
            depth[0] += 1
            if depth[0] > MAX_EXPRESSION_DEPTH:
                raise _ParseError("too deep")
            pos[0] += 1
            inner = expr()
            close = peek()
            if close is None or close[0] != ")":
                raise _ParseError("missing )")
            pos[0] += 1
            depth[0] -= 1
            return inner
        raise _ParseError("expected a number or (")

    def binary(nxt, ops):
        left = nxt()
        while True:
            t = peek()
            if t is None or t[0] not in ops:
                return left
            pos[0] += 1
            right = nxt()
            left = ("bin", t[0], left, right)

    def term():
        return binary(factor, "*/")

    def expr():
        return binary(term, "+-")

    try:
        tree = expr()
    except _ParseError:
        return None
    if peek() is not None:
        return None
    return tree, numbers


def _evaluate(tree):
    """The exact value, or None on a division by zero anywhere in the tree."""
    if tree[0] == "num":
        return Fraction(tree[1])
    _, op, left, right = tree
    a = _evaluate(left)
    if a is None:
        return None
    b = _evaluate(right)
    if b is None:
        return None
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return None if b == 0 else a / b


def _judge_countdown(problem, completion):
    numbers, target = problem
    parsed = _parse_expression(completion)
    if parsed is None:
        return {"accuracy": 0, "format": 0}
    tree, used = parsed
    left = {}
    for n in numbers:
        left[n] = left.get(n, 0) + 1
    for n in used:
        if left.get(n, 0) == 0:
            return {"accuracy": 0, "format": 0}
        left[n] -= 1
    value = _evaluate(tree)
    if value is None:
        return {"accuracy": 0, "format": 0}
    return {"accuracy": 1, "format": 1} if value == target else {"accuracy": 0, "format": 1}


# ---------------------------------------------------------------------------------------------------------
# The tasks: alphabet, default weights, prompt parser, completion limit, check (as src/tasks/<task>.ts).


def _operation(op, digits_of_answer, apply):
    pattern = re.compile(r"(0|[1-9][0-9]{0,29})" + re.escape(op) + r"(0|[1-9][0-9]{0,29})=")

    def parse(prompt):
        m = pattern.fullmatch(prompt)
        return (m.group(1), m.group(2)) if m else None

    def check(p, completion, _difficulty):
        return _exact_match(str(apply(int(p[0]), int(p[1]))), completion, _natural_format(completion), "right")

    return {
        "alphabet": "0123456789" + op + "=",
        "weights": {"accuracy": 0.9, "format": 0.1},
        "parse": parse,
        "limit": lambda p: 2 * digits_of_answer(len(p[0]), len(p[1])) + 2,
        "check": check,
    }


def _letters(word, transform):
    pattern = re.compile(word + ":([" + COPY_LETTERS + "]{1,64})=")

    def check(s, completion, _difficulty):
        ok = bool(re.fullmatch("[" + COPY_LETTERS + "]+", completion)) and len(completion) == len(s)
        return _exact_match(transform(s), completion, ok)

    return {
        "alphabet": word + ":=" + COPY_LETTERS,
        "weights": {"accuracy": 0.9, "format": 0.1},
        "parse": lambda prompt: (pattern.fullmatch(prompt) or [None, None])[1],
        "limit": lambda s: 2 * len(s) + 2,
        "check": check,
    }


def _count_parse(prompt):
    m = re.fullmatch(r"count ([a-d]):([a-d]{1,64})=", prompt)
    return (m.group(1), m.group(2)) if m else None


def _parity_check(bits, completion, _difficulty):
    return _exact_match(str(bits.count("1") % 2), completion, completion in ("0", "1"))


def _sort_check(s, completion, _difficulty):
    ok = bool(re.fullmatch(r"[0-9]+", completion)) and len(completion) == len(s)
    parts = _exact_match("".join(sorted(s)), completion, ok)
    parts["permutation"] = 1 if sorted(completion) == sorted(s) else 0
    return parts


def _bandit_check(_p, completion, k):
    arms = BANDIT_ARMS[:k]
    i = arms.find(completion) if len(completion) == 1 else -1
    if i < 0:
        return {"accuracy": 0, "format": 0}
    return {"accuracy": (i + 1) / k, "format": 1, "best": 1 if i == k - 1 else 0}


def _countdown_parse(prompt):
    m = re.fullmatch(r"([1-9][0-9]{0,3}) from ([1-9][0-9]{0,2}(?:,[1-9][0-9]{0,2}){0,4})=", prompt)
    return ([int(x) for x in m.group(2).split(",")], int(m.group(1))) if m else None


# ---------------------------------------------------------------------------------------------------------
# Knights and Knaves: statements about 2-3 people (src/tasks/knights-knaves.ts), solved by trying every assignment.

KK_PEOPLE = "ABC"


def _kk_holds(s, knights):
    """Whether statement s holds when knights[i] says whether person i is a knight; None for a foreign statement."""
    def who(letter):
        i = KK_PEOPLE.find(letter)
        return knights[i] if 0 <= i < len(knights) else None

    m = re.fullmatch(r"([A-C])([kn])", s)
    if m:
        k = who(m.group(1))
        return None if k is None else k == (m.group(2) == "k")
    m = re.fullmatch(r"([A-C])([kn])([&|])([A-C])([kn])", s)
    if m:
        a, b = who(m.group(1)), who(m.group(4))
        if a is None or b is None:
            return None
        a, b = a == (m.group(2) == "k"), b == (m.group(5) == "k")
        return (a and b) if m.group(3) == "&" else (a or b)
    m = re.fullmatch(r"([A-C])([=!])([A-C])", s)
    if m:
        p, q = who(m.group(1)), who(m.group(3))
        if p is None or q is None:
            return None
        return p == q if m.group(2) == "=" else p != q
    return None


def _kk_parse(prompt):
    m = re.fullmatch(r"kk:(.*)\?", prompt)
    if not m:
        return None
    said = m.group(1).split(";")
    if len(said) < 2 or len(said) > len(KK_PEOPLE):
        return None
    statements = []
    for i, part in enumerate(said):
        pieces = part.split(":")
        if len(pieces) != 2 or pieces[0] != KK_PEOPLE[i] or _kk_holds(pieces[1], [True] * len(said)) is None:
            return None
        statements.append(pieces[1])
    return statements


def _kk_solutions(statements):
    n = len(statements)
    out = []
    for mask in range(1 << n):
        knights = [((mask >> (n - 1 - i)) & 1) == 1 for i in range(n)]
        if all(_kk_holds(s, knights) == knights[i] for i, s in enumerate(statements)):
            out.append("".join("k" if k else "n" for k in knights))
    return out


def _kk_check(statements, completion, _difficulty):
    solutions = _kk_solutions(statements)
    ok = bool(re.fullmatch("[kn]{" + str(len(statements)) + "}", completion))
    return _exact_match(solutions[0] if len(solutions) == 1 else "", completion, ok)


# Word problems: templated sentences with one exact integer answer (src/tasks/word-problems.ts); the last number in
# the completion is the answer ("1,200 marbles" is 1200).
_WP_NAMES = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Gus", "Hana"]
_WP_ITEMS = ["apple", "pencil", "marble", "sticker", "book", "cookie"]
_WP_TEMPLATES = [
    ("{name} has {0} {item}s and buys {1} more. How many {item}s does {name} have now?", lambda n: n[0] + n[1]),
    (
        "{name} had {0} {item}s and gave {1} of them to a friend. How many {item}s does {name} have left?",
        lambda n: n[0] - n[1],
    ),
    ("There are {0} boxes with {1} {item}s in each box. How many {item}s are there in all?", lambda n: n[0] * n[1]),
    (
        "{name} shares {0} {item}s equally among {1} friends. How many {item}s does each friend get?",
        lambda n: n[0] // n[1] if n[1] and n[0] % n[1] == 0 else None,
    ),
    (
        "{name} has {0} {item}s, buys {1} more and then gives away {2}. How many {item}s does {name} have now?",
        lambda n: n[0] + n[1] - n[2],
    ),
    ("A shop sells {item}s for {0} dollars each. How many dollars do {1} {item}s cost?", lambda n: n[0] * n[1]),
]


def _wp_pattern(text):
    out, seen = "", set()
    for part in re.split(r"(\{name\}|\{item\}|\{\d\})", text):
        if part in ("{name}", "{item}"):
            key = part[1:-1]
            words = _WP_NAMES if key == "name" else _WP_ITEMS
            out += "(?P=" + key + ")" if key in seen else "(?P<" + key + ">" + "|".join(words) + ")"
            seen.add(key)
        elif re.fullmatch(r"\{\d\}", part):
            out += "(?P<n" + part[1] + ">0|[1-9][0-9]{0,5})"
        else:
            out += re.escape(part)
    return re.compile(out)


_WP_PATTERNS = [(_wp_pattern(t), solve) for t, solve in _WP_TEMPLATES]
_WP_NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?")


def _wp_parse(prompt):
    for pattern, solve in _WP_PATTERNS:
        m = pattern.fullmatch(prompt)
        if m:
            groups = m.groupdict()
            return solve([int(groups["n" + str(i)]) for i in range(3) if "n" + str(i) in groups])
    return None


def _wp_check(expected, completion, _difficulty):
    found = _WP_NUMBER.findall(completion)
    if not found:
        return {"accuracy": 0, "format": 0}
    given = float(found[-1].replace(",", ""))
    return {"accuracy": 1 if given == expected else 0, "format": 1}


TASKS = {
    "addition": _operation("+", lambda a, b: max(a, b) + 1, lambda a, b: a + b),
    "multiplication": _operation("*", lambda a, b: a + b, lambda a, b: a * b),
    "copy": _letters("copy", lambda s: s),
    "reverse": _letters("rev", lambda s: s[::-1]),
    "count": {
        "alphabet": "count :=" + COUNT_LETTERS + "0123456789",
        "weights": {"accuracy": 0.9, "format": 0.1},
        "parse": _count_parse,
        "limit": lambda p: 4,
        "check": lambda p, c, _d: _exact_match(str(p[1].count(p[0])), c, _natural_format(c), "right"),
    },
    "parity": {
        "alphabet": "par:=01",
        "weights": {"accuracy": 0.9, "format": 0.1},
        "parse": lambda prompt: (re.fullmatch(r"par:([01]{1,64})=", prompt) or [None, None])[1],
        "limit": lambda p: 4,
        "check": _parity_check,
    },
    "sort": {
        "alphabet": "sort:=0123456789",
        "weights": {"accuracy": 0.9, "format": 0.1},
        "parse": lambda prompt: (re.fullmatch(r"sort:([0-9]{1,64})=", prompt) or [None, None])[1],
        "limit": lambda s: 2 * len(s) + 2,
        "check": _sort_check,
    },
    "bandit": {
        "alphabet": BANDIT_PROMPT + BANDIT_ARMS,
        "weights": {"accuracy": 1, "format": 0},
        "parse": lambda prompt: True if prompt == BANDIT_PROMPT else None,
        "limit": lambda p: 4,
        "check": _bandit_check,
    },
    "countdown": {
        "alphabet": "0123456789 from,=+-*/()",
        "weights": {"accuracy": 0.9, "format": 0.1},
        "parse": _countdown_parse,
        "limit": lambda p: 6 * len(p[0]) + 4,
        "check": lambda p, c, _d: _judge_countdown(p, c),
    },
    "word_problems": {
        "alphabet": "".join(chr(c) for c in range(32, 127) if chr(c) not in "<>"),
        "weights": {"accuracy": 0.9, "format": 0.1},
        "parse": _wp_parse,
        "limit": lambda p: 160,
        "check": _wp_check,
    },
    "knights_knaves": {
        "alphabet": "kk:;?&|=!" + KK_PEOPLE + "kn",
        "weights": {"accuracy": 0.9, "format": 0.1},
        "parse": _kk_parse,
        "limit": lambda p: len(p) + 2,
        "check": _kk_check,
    },
}


def _clamp01(x):
    return min(1.0, max(0.0, x))


def verify(task, difficulty, prompt, completion):
    """The reward parts of a completion (accuracy, format and the task's informational parts), each in [0, 1]."""
    spec = TASKS[task]
    rejected = {"accuracy": 0, "format": 0}
    problem = spec["parse"](prompt) if isinstance(prompt, str) else None
    if problem is None or not isinstance(completion, str) or completion == "":
        return rejected
    # The lab counts UTF-16 code units; a character outside the alphabet is rejected either way.
    if len(completion.encode("utf-16-le")) // 2 > spec["limit"](problem):
        return rejected
    if any(ch not in spec["alphabet"] for ch in completion):
        return rejected
    parts = spec["check"](problem, completion, difficulty)
    parts["accuracy"] = _clamp01(parts["accuracy"])
    parts["format"] = _clamp01(parts["format"])
    return parts


def reward(task, difficulty, prompt, completion, weights=None):
    """The lab's reward: sum over reward functions of weight * part (the task's own weights when none are given)."""
    parts = verify(task, difficulty, prompt, completion)
    w = weights if weights is not None else TASKS[task]["weights"]
    return float(sum(v * parts.get(k, 0) for k, v in w.items()))
