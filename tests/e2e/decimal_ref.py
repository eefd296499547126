# Owns: the decimal arithmetic the e2e reference scripts (*.ref.py) compute
# expected outputs with, on Python's integers counting millionths: parsing a
# decimal field, the product rounded half away from zero to 6 digits (as
# redfox's decimals multiply), and the text `redfox run` prints (trailing
# zeros trimmed, at least two fraction digits).
M = 10**6


def millionths(text):
    sign = -1 if text.startswith("-") else 1
    whole, _, frac = text.lstrip("+-").partition(".")
    return sign * (int(whole or "0") * M + int((frac + "000000")[:6]))


def mul(a, b):
    p = a * b
    q, r = divmod(abs(p), M)
    if 2 * r >= M:
        q += 1
    return q if p >= 0 else -q


def text(m):
    sign = "-" if m < 0 else ""
    whole, frac = divmod(abs(m), M)
    f = ("%06d" % frac).rstrip("0")
    return "%s%d.%s" % (sign, whole, f.ljust(2, "0"))
