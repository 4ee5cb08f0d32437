"""Live state of the foundation scenario's nodes, read through the tools themselves."""

from molecule_hosts import hosts_of

testinfra_hosts = hosts_of()


def test_systemd_is_pid1_and_running(host):
    assert host.file("/proc/1/comm").content_string.strip() == "systemd"
    state = host.run("systemctl is-system-running").stdout.strip()
    assert state in ("running", "degraded"), state
