# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one list of what is secret, and the one way to hide it: the support bundle
(``_health_read.redact``), the drift check's OpenSM judge, ``state_check``'s logged and
returned parameters. Standard library only, Python 3.6+ (copied onto the nodes and run there
by the health timer).

A *name* is secret when its words (split at ``_ - .``, spaces and camelCase, lower-cased) are:

* one of OpenSM's key options (``opensm/osm_subnet.c``, ``opt_tbl``: the 64-bit keys
  ``m_key``, ``sm_key``, ``sa_key``, ``cc_key``), or any ``*_key`` / ``*-key`` / ``*Key``
  (vendor keys, ``private_key``, ``api-key``, ``x-api-key``, ``ssh_key``, ``access_key``),
  also written as one word (``MKey``, ``smkey``, ``apikey``, ``secretkey``);
* ``password``, ``passwd``, ``passphrase``, ``secret``, ``credential(s)`` anywhere in the name
  (``AWS_SECRET_ACCESS_KEY``, ``NCCL_FOO_PASSWORD``, ``db_password_file``, ``CLIENTSECRET``);
* ``token`` or ``authorization`` as the last word, or a last word ending in ``token``
  (``GITHUB_TOKEN``, ``foo.token`` on /proc/cmdline, ``csrftoken``, ``Authorization``).

Not secret, on purpose (each decided because it is common here and not a credential):

* a key whose last word is not the key: ``m_key_protection_level``, ``m_key_lease_period``,
  ``m_key_lookup``, ``MkeyLeasePeriod``, ``MkeyProtBits``, ``cc_key_enable``, ``key_id``;
* the partition key, an index every port may read: ``pkey``, ``P_Key``, ``partition_key``,
  ``NCCL_IB_PKEY``, ``max_pkeys``, ``allow_both_pkeys``; the ``Q_Key`` of a datagram QP
  (``0x0B1B`` for IPoIB, printed by ``saquery``); and ``public_key``/``pub_key``
  (public by definition), ``primary_key``, ``foreign_key``, ``sort_key``;
* words that merely contain ``key``: ``monkey``, ``keepalive``, ``hotkey``, ``keyboard``;
  and ``sminfo_polling_timeout``, ``guid``, ``partition`` (no secret word at all);
* ``tokens`` and ``token_*`` (``max_tokens``, ``token_ttl``: counts and settings);
* ``PWD``/``OLDPWD`` (the working directory in every environment dump) and ``pass``
  (``rx_xdp_pass`` and other counters: a hidden counter breaks the offline health judge).

``redact_text`` finds ``name = value``, ``name: value``, ``name value``, ``name<TAB>value``,
``NAME=value`` (environment, ``/proc/cmdline``'s ``foo.token=...``), ``--name value``, JSON and
Python ``"name": "value"`` and the dotted dumps of the InfiniBand tools
(``SM_Key.............0x...``, ``Mkey:.........0x...``) anywhere in a line, and replaces the
value only: the name stays visible. A name is a whole run of name characters (never ``\\b``,
which does not match after ``_``). The value is a quoted string, up to the next blank (or
``&``/quote) after ``=``, or the rest of the line after ``:``, dots or blanks (hiding too much
of a line is the safe side: prose such as ``# the M_Key of a port`` loses its tail).

A URL's password (``https://user:pass@host``, ``http_proxy=http://u:p@proxy:3128``) is hidden
wherever it is, whatever the name in front of it: the scheme, the user and the host stay.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

PLACEHOLDER = "<redacted>"

# OpenSM's 64-bit keys (osm_subnet.c opt_tbl, opts_parse_net64): what opensm.conf holds secret.
OPENSM_KEYS = ("m_key", "sm_key", "sa_key", "cc_key")

# A name holding one of these words anywhere is secret.
ANYWHERE_WORDS = frozenset(("password", "passwd", "passphrase", "secret", "credential", "credentials"))
# A name whose last word is one of these is secret.
LAST_WORDS = frozenset(("key", "token", "authorization", "mkey", "smkey", "sakey", "cckey", "apikey",
                        "secretkey", "privatekey", "accesskey"))
# ... and a word ending so (one-word names: DBPASSWORD, GITHUBTOKEN, CLIENTSECRET).
_WORD_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "secretkey", "privatekey",
                 "accesskey")
# ``<word>_key`` that is not secret.
PUBLIC_KEY_QUALIFIERS = frozenset(("p", "partition", "q", "public", "pub", "primary", "foreign", "sort"))
# Minimum length of a value worth masking everywhere in a module's output (secret_values).
MIN_SECRET_LENGTH = 4

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def words(name):
    """``name`` as its lower-case words: split at anything not a letter or digit and at
    camelCase (``apiKey`` -> api, key; ``SM_Key`` -> sm, key; ``MkeyLeasePeriod`` -> mkey,
    lease, period)."""
    return [w.lower() for w in _SPLIT.split(_CAMEL.sub("_", str(name))) if w]


def is_secret(name):
    """True when a setting, variable or field called ``name`` holds a secret (see the module
    docstring for the list and the names deliberately not secret)."""
    if not isinstance(name, str):
        return False
    parts = words(name)
    if not parts:
        return False
    last = parts[-1]
    if any(w in ANYWHERE_WORDS for w in parts):
        return True
    if last == "key":
        return len(parts) == 1 or parts[-2] not in PUBLIC_KEY_QUALIFIERS
    if last in LAST_WORDS:
        return True
    return any(last.endswith(ending) for ending in _WORD_ENDINGS)


def hide(name, value, placeholder=PLACEHOLDER):
    """``value``, or ``placeholder`` when ``name`` is secret and there is a value (None stays
    None: "absent" is not a secret)."""
    if value is None or not is_secret(name):
        return value
    return placeholder


# A name: a run of name characters not preceded by one (so never the tail of a longer name);
# dots only between name characters (foo.token, not the dots of ``SM_Key......``).
_NAME = re.compile(r"(?<![A-Za-z0-9_.-])[A-Za-z_-][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*")
_SEP = re.compile(r"""(?P<close>["']?)(?:
        [ \t]*(?P<op>[:=])\.*[ \t]*     # name: value, name=value, name = value, Mkey:.....value
      | \.{2,}[ \t]*                    # SM_Key..........value (the IB tools' dumps)
      | [ \t]+                          # name value, name<TAB>value (opensm.conf), --name value
    )""", re.X)
_QUOTED = re.compile(r""""(?:[^"\\\n]|\\.)*"|'[^'\n]*'""")
_WORD_VALUE = re.compile(r"""[^\s"'&]+""")
_JSON_LITERAL = re.compile(r"""[^\s,}\]]+""")
_LINE_VALUE = re.compile(r"[^\n\r]*")


def _value_at(text, name_start, pos):
    """(start, end, quote_it) of the value after the name that ends at ``pos``, or None."""
    sep = _SEP.match(text, pos)
    if not sep:
        return None
    close = sep.group("close")
    if close and not (name_start > 0 and text[name_start - 1] == close and sep.group("op")):
        return None                     # a quote after a name that is not a quoted key
    at = sep.end()
    quoted = _QUOTED.match(text, at)
    if quoted:
        return at + 1, quoted.end() - 1, False
    if close:                           # "name": value outside quotes: a JSON literal or a nested object
        if at < len(text) and text[at] in "{[":
            return None                 # its own names are looked at one by one
        literal = _JSON_LITERAL.match(text, at)
        return (at, literal.end(), True) if literal and literal.end() > at else None
    found = (_WORD_VALUE if sep.group("op") == "=" else _LINE_VALUE).match(text, at)
    end = found.end()
    while end > at and text[end - 1] in " \t":
        end -= 1
    return (at, end, False) if end > at else None


# The password of a URL's user information (RFC 3986 ``scheme://user:password@host``): the user
# name stays (it says whose), the password goes. A percent-encoded '@' or '/' stays inside it. The
# user information runs to the LAST '@' before the first '/', '?' or '#' after the '//' (as
# urllib's rpartition and curl read it): a raw '@' in the password (``user:p@ssw0rd@host``) is part
# of the password, not the end of it, so no tail of it leaks (issue 40). The user name ends at the
# first ':'.
URL_CREDENTIALS = re.compile(r"""(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^\s:/?#"'<>]*):"""
                             r"""(?P<password>[^\s/?#"'<>]+)@""")


def url_spans(text):
    """The (start, end, False) of every URL password in ``text``."""
    return [(m.start("password"), m.end("password"), False) for m in URL_CREDENTIALS.finditer(text)]


def secret_spans(text):
    """The (start, end) of every secret value in ``text``, in order: the values of secret-named
    settings and the passwords of URLs (``https://user:pass@host``)."""
    spans = []
    pos = 0
    while True:
        found = _NAME.search(text, pos)
        if not found:
            break
        pos = found.end()
        if not is_secret(found.group(0)):
            continue
        value = _value_at(text, found.start(), found.end())
        if value:
            spans.append(value)
            pos = value[1]
    out, last = [], 0
    for span in sorted(spans + url_spans(text)):
        if span[0] >= last:          # a URL inside a secret value is hidden with it
            out.append(span)
            last = span[1]
    return out


def redact_text(text, placeholder=PLACEHOLDER):
    """``text`` with the value of every secret-looking setting replaced by ``placeholder``,
    the name and the separator kept (``sm_key\\t<redacted>``, ``"api-key": "<redacted>"``,
    ``foo.token=<redacted>``)."""
    if not isinstance(text, str) or not text:
        return text
    out, last = [], 0
    for start, end, quote_it in secret_spans(text):
        out.append(text[last:start])
        out.append('"%s"' % placeholder if quote_it else placeholder)
        last = end
    out.append(text[last:])
    return "".join(out)


def redact(value, placeholder=PLACEHOLDER):
    """``value`` (nested dicts, lists, tuples, strings) with every secret hidden: the value of a
    dict key that is a secret name (whatever it holds), and every secret in a string
    (``redact_text``). A new structure; ``value`` is not changed."""
    if isinstance(value, dict):
        return dict((k, placeholder if is_secret(k) and v is not None else redact(v, placeholder))
                    for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v, placeholder) for v in value)
    if isinstance(value, str):
        return redact_text(value, placeholder)
    return value


def secret_values(value):
    """Every secret value in ``value`` (nested), as strings: the scalars under secret dict keys
    and the secret values of strings. For masking them wherever they would appear in an
    output; values shorter than MIN_SECRET_LENGTH are left out (masking ``0`` everywhere would
    destroy the output, not protect a key)."""
    found = set()

    def walk(item, secret):
        if isinstance(item, dict):
            for k, v in item.items():
                walk(v, secret or is_secret(k))
        elif isinstance(item, (list, tuple)):
            for v in item:
                walk(v, secret)
        elif isinstance(item, str):
            if secret:
                found.add(item.strip())
            for start, end, _quote in secret_spans(item):
                found.add(item[start:end].strip())
        elif secret and item is not None and not isinstance(item, bool):
            found.add(str(item))
    walk(value, False)
    return set(v for v in found if len(v) >= MIN_SECRET_LENGTH and v != PLACEHOLDER)
