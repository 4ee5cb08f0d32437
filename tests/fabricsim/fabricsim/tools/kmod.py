"""modprobe and modinfo for the NVIDIA kernel modules of a GPU profile.

A GPU profile has the NVIDIA driver loaded (``$SYSFS_PATH/module/nvidia/initstate`` = live, as
the kernel shows a loaded module) and ships ``nvidia_peermem`` unloaded.  ``modprobe
nvidia_peermem`` loads it (``module/nvidia_peermem/initstate``); the sysfs tree is under /run,
so like a real module it is gone after a restart unless a ``modules-load.d`` file names it
(``fabricsim boot`` plays systemd-modules-load for the simulated modules).  Any other module
is passed to the real tool, when the image has one.
"""
import os
import subprocess

from .. import health_faults, paths

DRIVER_MODULES = ("nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm")   # loaded with the driver
SHIPPED_MODULES = DRIVER_MODULES + ("nvidia_peermem",)
REAL_DIRS = ("/usr/sbin", "/sbin", "/usr/bin", "/bin")
MODULES_LOAD_DIRS = ("/etc/modules-load.d", "/run/modules-load.d", "/usr/lib/modules-load.d")


def canonical(name):
    return name.replace("-", "_")


def simulated(profile, name):
    return bool(profile.gpus) and canonical(name) in SHIPPED_MODULES


def module_dir(name):
    return os.path.join(paths.sys_backing(), "module", canonical(name))


def loaded(name):
    try:
        with open(os.path.join(module_dir(name), "initstate")) as handle:
            return handle.read().strip() == "live"
    except (IOError, OSError):
        return False


def load(name):
    directory = module_dir(name)
    os.makedirs(directory, exist_ok=True)
    for attr, value in (("initstate", "live"), ("refcnt", "0")):
        with open(os.path.join(directory, attr), "w") as handle:
            handle.write(value + "\n")


def unload(name):
    directory = module_dir(name)
    for attr in ("initstate", "refcnt"):
        try:
            os.unlink(os.path.join(directory, attr))
        except OSError:
            pass
    try:
        os.rmdir(directory)
    except OSError:
        pass


def boot(profile):
    """At boot: the driver is loaded; modules-load.d entries of simulated modules load."""
    if not profile.gpus:
        return
    for name in DRIVER_MODULES:
        load(name)
    dirs = os.environ.get("FABRICSIM_MODULES_LOAD_DIRS")
    for directory in (dirs.split(":") if dirs else MODULES_LOAD_DIRS):
        try:
            names = sorted(n for n in os.listdir(directory) if n.endswith(".conf"))
        except OSError:
            continue
        for conf in names:
            try:
                with open(os.path.join(directory, conf)) as handle:
                    lines = handle.read().splitlines()
            except (IOError, OSError):
                continue
            for line in lines:
                word = line.strip()
                if word and word[0] not in "#;" and simulated(profile, word) \
                        and not health_faults.peermem_refused(profile.faults, word):
                    load(word)


def _release():
    return os.uname()[2]


def _names(args):
    return [a for a in args if not a.startswith("-")]


def is_write(tool, args):
    return tool == "modprobe" and not any(a in ("-n", "--dry-run", "-c", "--showconfig") for a in args)


def _real(tool, args):
    for directory in REAL_DIRS:
        path = os.path.join(directory, tool)
        if os.path.exists(path) and os.path.realpath(path) != os.path.realpath(__file__):
            proc = subprocess.run([path] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, check=False)
            return proc.stdout, proc.stderr, proc.returncode
    return "", "%s: command not found\n" % tool, 127


def run(tool, args, ctx):
    names = _names([a for i, a in enumerate(args) if not (i > 0 and args[i - 1] in ("-F", "--field"))])
    if not names or not all(simulated(ctx.profile, n) for n in names):
        if names and any(simulated(ctx.profile, n) for n in names):
            return "", "fabricsim: %s of simulated and real modules in one call is not simulated\n" % tool, 1
        return _real(tool, args)
    refused = [health_faults.peermem_refused(ctx.profile.faults, n) for n in names]
    if any(refused) and not ("-r" in args or "--remove" in args):
        lead = "modinfo: ERROR" if tool == "modinfo" else "modprobe: FATAL"
        return "", "%s: %s\n" % (lead, [r for r in refused if r][0]), 1
    if tool == "modinfo":
        return modinfo(args, names)
    remove = "-r" in args or "--remove" in args
    dry = "-n" in args or "--dry-run" in args
    if ctx.fail_now:
        return "", "modprobe: ERROR: could not insert '%s': Device or resource busy\n" % canonical(names[0]), 1
    for name in (names if remove else names[:1]):
        if dry:
            continue
        if remove:
            if canonical(name) in DRIVER_MODULES and loaded("nvidia_peermem"):
                return "", "modprobe: FATAL: Module %s is in use.\n" % canonical(name), 1
            unload(name)
        else:
            load(name)
    return "", "", 0


def modinfo(args, names):
    field = None
    for i, arg in enumerate(args):
        if arg in ("-F", "--field") and i + 1 < len(args):
            field = args[i + 1]
        elif arg.startswith("--field="):
            field = arg.split("=", 1)[1]
    out = []
    for name in names:
        info = [("filename", "/lib/modules/%s/updates/dkms/%s.ko" % (_release(), canonical(name).replace("_", "-"))),
                ("version", "535.183.06"), ("license", "Dual BSD/GPL" if "peermem" in name else "NVIDIA"),
                ("description", "NVIDIA GPU memory plug-in" if "peermem" in name else "NVIDIA driver"),
                ("depends", "nvidia,ib_core" if "peermem" in name else "")]
        if field:
            out.extend(v for k, v in info if k == field)
        else:
            out.extend("%-16s%s" % (k + ":", v) for k, v in info)
    return "".join(line + "\n" for line in out), "", 0
