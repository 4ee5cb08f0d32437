# -*- coding: utf-8 -*-
"""URL credentials (``https://user:pass@host``) are secrets wherever they appear (issue 40, low):
redact_text hides the password and keeps the rest, secret_values finds it for masking, a bundle's
redact walks it."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import _secrets


@pytest.mark.parametrize("text, expected", [
    ("https://user:s3cretpw@repo.example.com/x", "https://user:<redacted>@repo.example.com/x"),
    ("http_proxy=http://proxy:Hunter2x@10.0.0.1:3128", "http_proxy=http://proxy:<redacted>@10.0.0.1:3128"),
    ("baseurl = https://ci:p%40ss:word@mirror/el9 and git+ssh://me:tok3nvalue@git/x",
     "baseurl = https://ci:<redacted>@mirror/el9 and git+ssh://me:<redacted>@git/x"),
    ('{"url": "https://:onlypass@host"}', '{"url": "https://:<redacted>@host"}'),
    # a raw '@' in the password: the user information runs to the LAST '@' before '/', '?' or '#'
    ("https://user:p@ssw0rd99@host/x", "https://user:<redacted>@host/x"),
    ("https://user:a@b@c:d@host:8443?q=1@x#f@g", "https://user:<redacted>@host:8443?q=1@x#f@g"),
    ("http_proxy=http://u:p@@ss@proxy:3128 next", "http_proxy=http://u:<redacted>@proxy:3128 next"),
    ('"https://u:p@w@h/a@b"', '"https://u:<redacted>@h/a@b"'),
    ("ssh://git@host:pw@x/y", "ssh://git@host:<redacted>@x/y"),
    # no credentials: nothing changes
    ("https://repo.example.com:8443/path?q=1@x", "https://repo.example.com:8443/path?q=1@x"),
    ("ssh://git@github.com/org/repo", "ssh://git@github.com/org/repo"),
])
def test_url_passwords_are_redacted(text, expected):
    assert _secrets.redact_text(text) == expected


def test_url_passwords_are_found_for_masking_and_in_bundles():
    value = {"repos": ["https://user:s3cretpw@repo.example.com/x"], "env": {"HTTPS_PROXY": "http://u:pr0xypass@p:3128"}}
    assert _secrets.secret_values(value) == {"s3cretpw", "pr0xypass"}
    assert _secrets.redact(value) == {"repos": ["https://user:<redacted>@repo.example.com/x"],
                                      "env": {"HTTPS_PROXY": "http://u:<redacted>@p:3128"}}


def test_a_url_inside_a_secret_value_is_hidden_once():
    assert _secrets.redact_text("api_token=https://u:pw12345@h") == "api_token=<redacted>"


def test_no_tail_of_a_password_with_an_at_sign_leaks():
    """#40 low: ``user:p@ssw0rd99@host`` once became ``user:<redacted>@ssw0rd99@host``."""
    text = "repo: https://user:p@ssw0rd99@host/x"
    assert _secrets.secret_values({"url": text.split()[1]}) == {"p@ssw0rd99"}
    assert "ssw0rd99" not in _secrets.redact_text(text)
    assert _secrets.redact({"u": [text]}) == {"u": ["repo: https://user:<redacted>@host/x"]}
