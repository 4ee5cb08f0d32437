"""Placeholder: implemented in a later step."""


def is_write(tool, args):
    return False


def run(tool, args, ctx):
    return "", "%s: not simulated yet\n" % tool, 1
