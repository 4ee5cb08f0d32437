"""Issue 44: the argument-spec check of an area's variables checks, per host, only the values that
are not the role's own (checked) defaults; the result is what the whole check gives."""
import os

import pytest
import yaml
from ansible.errors import AnsibleError
from ansible.module_utils.common import arg_spec

from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs as R

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


def _defaults(role):
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)


def _get(values):
    return lambda name, *default: values[name] if name in values else default[0]


@pytest.fixture()
def counted(monkeypatch):
    """The option names each argument-spec check was given."""
    seen = []
    real = arg_spec.ArgumentSpecValidator

    class Counting(real):
        def __init__(self, spec, *args, **kwargs):
            seen.append(sorted(spec))
            super(Counting, self).__init__(spec, *args, **kwargs)
    monkeypatch.setattr(R, "ArgumentSpecValidator", Counting)
    R.checked_defaults("roce_qos")   # read once per process, before the host's check
    return seen


def _full_check(role, values):
    options = R.role_options(role)
    return arg_spec.ArgumentSpecValidator(options).validate(dict((n, values[n]) for n in options))


@pytest.mark.parametrize("role", ["roce_qos", "nccl_env", "gpudirect", "nic_firmware", "rails", "opensm"])
def test_every_plain_default_passes_its_spec_and_is_trusted(role):
    trusted = R.checked_defaults(role)
    defaults = _defaults(role)
    plain = dict((n, v) for n, v in defaults.items() if not R._has_template(v))   # pylint: disable=protected-access
    checked = arg_spec.ArgumentSpecValidator(dict((n, R.role_options(role)[n]) for n in plain)).validate(dict(plain))
    assert not checked.error_messages
    # trusted: each plain default the check leaves as it is (a path option's value may be rewritten)
    same = [n for n in plain if R._canonical(checked.validated_parameters[n]) == R._canonical(plain[n])]  # noqa
    assert len(same) >= len(plain) - 2 and sorted(trusted) == sorted(same)


def test_a_host_with_the_defaults_and_one_override_checks_the_override_alone(counted):
    values = dict(_defaults("roce_qos"), roce_qos_roce_dscp=24)
    got = R.checked_variables("roce_qos", _get(values))
    assert counted == [["roce_qos_roce_dscp"]]
    assert got == dict((n, values[n]) for n in R.role_options("roce_qos"))
    assert not _full_check("roce_qos", values).error_messages


def test_a_refused_override_is_still_an_error_naming_it(counted):
    values = dict(_defaults("roce_qos"), roce_qos_roce_dscp="twenty-six")
    assert _full_check("roce_qos", values).error_messages        # the whole check refuses it too
    with pytest.raises(AnsibleError) as exc:
        R.checked_variables("roce_qos", _get(values))
    assert "roce_qos_roce_dscp='twenty-six'" in str(exc.value)
    assert counted == [["roce_qos_roce_dscp"]]


def test_the_default_as_text_is_checked_and_converted_as_the_whole_check_converts_it(counted):
    defaults = _defaults("roce_qos")
    name = [n for n, o in R.role_options("roce_qos").items() if o.get("type") == "int" and isinstance(defaults.get(n), int)
            and not isinstance(defaults.get(n), bool)][0]
    values = dict(defaults)
    values[name] = str(defaults[name])     # the same number from a template, as text: not the default
    got = R.checked_variables("roce_qos", _get(values))
    assert counted == [[name]]
    assert got[name] == defaults[name] and isinstance(got[name], int)


def test_defaults_that_fail_their_own_spec_trust_nothing(monkeypatch, tmp_path):
    role = tmp_path / "roles" / "r"
    (role / "meta").mkdir(parents=True)
    (role / "defaults").mkdir()
    (role / "meta" / "argument_specs.yml").write_text(
        "argument_specs:\n  main:\n    options:\n      r_a: {type: int}\n      r_b: {type: str, choices: [x, y]}\n")
    (role / "defaults" / "main.yml").write_text("r_a: 1\nr_b: z\n")
    monkeypatch.setattr(R, "_COLLECTION", str(tmp_path))
    monkeypatch.setattr(R, "_OPTIONS", {})
    monkeypatch.setattr(R, "_DEFAULTS", {})
    assert R.checked_defaults("r") == {}
    with pytest.raises(AnsibleError) as exc:            # the default itself is refused, per host
        R.checked_variables("r", _get({"r_a": 1, "r_b": "z"}))
    assert "r_b must be one of: x, y, got: z" in str(exc.value)
