"""mlnx_qos (Mellanox/mlnx-tools python/mlnx_qos) over the DCB netlink path of mlx5.

Semantics kept from the real tool + mlx5 driver (en_dcbnl.c):
- trust is derived from the DCB app table: any DSCP (selector 5) app => "dscp";
- --trust dscp adds the 64 firmware-default apps (dscp -> dscp>>3) one by one;
- setting a DSCP app on a pcp port switches trust to dscp; deleting the last one (or
  flush, or --trust pcp) switches back to pcp; del of a mapping that does not match
  the hardware fails (ENOENT -> "dscp2prio command failed");
- the app table is listed newest first (kernel dcb_app_list), so the default map
  prints each priority's DSCPs in descending order;
- after any set the tool prints the full report.
"""
import contextlib
import io
import optparse

DCB_SEL_ETHERTYPE = 1
DCB_SEL_DSCP = 5
TSA_NAMES = ("strict", "ets", "vendor")
VARIANTS = {
    # HEAD (2024-11+): no "default priority:", max_buffer_size, sorted TCs, ratelimit prefix
    "head": {"default_prio": False, "buffer_suffix": "max_buffer_size", "sorted_tcs": True, "ratelimit": True,
             "defltprio_opt": False, "head_errors": True},
    # 2023-05 .. 2024-11
    "2023": {"default_prio": True, "buffer_suffix": "max_buffer_size", "sorted_tcs": True, "ratelimit": True,
             "defltprio_opt": True, "head_errors": False},
    # 2022-12 .. 2023-05
    "2022": {"default_prio": True, "buffer_suffix": "total_size", "sorted_tcs": True, "ratelimit": True,
             "defltprio_opt": True, "head_errors": False},
    # before 2022-05: bare comma after the buffers, TCs in dict (insertion) order
    "old": {"default_prio": True, "buffer_suffix": None, "sorted_tcs": False, "ratelimit": True,
            "defltprio_opt": True, "head_errors": False},
    # the layouts the corpus shows (tests/unit/fixtures/samples/mlnx_qos.txt), by mlnx-tools commit:
    # a60252a (2021-05, MLNX_OFED 5.x): "default priority:", total_size=, TCs in first-seen order (python 3)
    "ofed5": {"default_prio": True, "buffer_suffix": "total_size", "sorted_tcs": False, "ratelimit": True,
              "defltprio_opt": True, "head_errors": False},
    # 1259c00 (2019-02, OFED 4.6) .. a60252a: buffer line ending in a bare comma, no "default priority:";
    # under python 2 (CentOS 7) the TC dict iterates in TC order (MQ-REAL-CENTOS12-*)
    "ofed46": {"default_prio": False, "buffer_suffix": None, "sorted_tcs": True, "ratelimit": True,
               "defltprio_opt": False, "head_errors": False},
    # d1b0709 (2017-09, OFED 4.2) .. 1259c00: no receive-buffer line, no buffer row (MQ-REAL-NETARBITER-OFED42-DSCP)
    "ofed42": {"default_prio": False, "buffer_suffix": None, "sorted_tcs": True, "ratelimit": True,
               "defltprio_opt": False, "head_errors": False, "buffers": False},
    # 5c00758 (2017-06): "Priority trust mode: X" only, no DCBX / cable lines, a blank line after the PFC rows
    "2017-trust": {"default_prio": False, "buffer_suffix": None, "sorted_tcs": True, "ratelimit": True,
                   "defltprio_opt": False, "head_errors": False, "buffers": False, "dcbx_line": False,
                   "trust_line": "mode", "cable_line": False, "pfc_blank": True},
    # 80fb22e (2017-06, first commit): PFC block + blank line + TCs, nothing else
    "2017": {"default_prio": False, "buffer_suffix": None, "sorted_tcs": True, "ratelimit": True,
             "defltprio_opt": False, "head_errors": False, "buffers": False, "dcbx_line": False,
             "trust_line": None, "cable_line": False, "pfc_blank": True},
    # rate limit query unsupported: TC header lines lose their "tc: N ratelimit: ..., tsa: " prefix
    "norate": {"default_prio": False, "buffer_suffix": None, "sorted_tcs": True, "ratelimit": False,
               "defltprio_opt": False, "head_errors": True},
}
NODCB = ("Priority trust state is not supported on your system\n"
         "Buffers commands are not supported on your system\n"
         "Rate limit is not supported on your system!\n"
         "ETS features are not supported on your system\n")
LLDPAD_WARNING = "****** WARNING: lldpad service is running and may overwrite your settings ******\n\n"
PFC_TRACEBACK = """Traceback (most recent call last):
  File "/usr/sbin/mlnx_qos", line 488, in <module>
    pfc_delay = ctrl.get_ieee_pfc_delay()
                ^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/usr/lib/python3/dist-packages/dcbnetlink.py", line 223, in get_ieee_pfc_delay
    m = DcbNlMessage.recv(self.conn)
        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/usr/lib/python3/dist-packages/dcbnetlink.py", line 143, in recv
    msgs = conn.recv()
           ^^^^^^^^^^^
  File "/usr/lib/python3/dist-packages/netlink.py", line 252, in recv
    raise err
OSError: Netlink error: Operation not supported (95)

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/usr/sbin/mlnx_qos", line 492, in <module>
    print('mlnx_qos: Error setting pfc:' + e)
          ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~^~~
TypeError: can only concatenate str (not "OSError") to str
"""
DSCP_TRACEBACK = """Traceback (most recent call last):
  File "/usr/sbin/mlnx_qos", line 508, in <module>
    action, dscp, prio = opt.split(",")
    ^^^^^^^^^^^^^^^^^^
ValueError: {err}

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/usr/sbin/mlnx_qos", line 517, in <module>
    check_privilege(e)
  File "/usr/sbin/mlnx_qos", line 387, in check_privilege
    if is_privilege_excp(excp):
       ^^^^^^^^^^^^^^^^^^^^^^^
  File "/usr/sbin/mlnx_qos", line 384, in is_privilege_excp
    return errno.EPERM == excp.errno
                          ^^^^^^^^^^
AttributeError: 'ValueError' object has no attribute 'errno'
"""
EBUSY = "Netlink error: Device or resource busy (16)"
EINVAL = "Netlink error: Invalid argument (22)"
EOPNOTSUPP = "Netlink error: Operation not supported (95)"
GET_PFC_TRACEBACK = """Traceback (most recent call last):
  File "/usr/sbin/mlnx_qos", line 430, in <module>
    pfc_en = ctrl.get_ieee_pfc_en()
             ^^^^^^^^^^^^^^^^^^^^^^
  File "/usr/lib/python3/dist-packages/dcbnetlink.py", line 209, in get_ieee_pfc_en
    m = DcbNlMessage.recv(self.conn)
        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/usr/lib/python3/dist-packages/dcbnetlink.py", line 143, in recv
    msgs = conn.recv()
           ^^^^^^^^^^^
  File "/usr/lib/python3/dist-packages/netlink.py", line 252, in recv
    raise err
OSError: Netlink error: Operation not supported (95)
"""


class Exit(Exception):
    def __init__(self, rc, err="", stderr=""):
        Exception.__init__(self, rc)
        self.rc = rc
        self.err = err          # stdout text (mlnx_qos prints its errors on stdout)
        self.stderr = stderr


class NetlinkError(Exception):
    pass


def variant_of(profile):
    v = profile.data.get("mlnx_qos_variant", "head")
    if isinstance(v, dict):
        base = dict(VARIANTS[v.get("base", "head")])
        base.update({k: val for k, val in v.items() if k != "base"})
        return base
    return dict(VARIANTS[v])


def make_parser(variant):
    p = optparse.OptionParser(usage="%prog -i <interface> [options]", version="%prog 1.2", prog="mlnx_qos")
    p.add_option("-f", "--pfc", dest="pfc", metavar="LIST",
                 help="Set priority flow control for each priority. LIST is comma separated value for each "
                      "priority starting from 0 to 7. Example: 0,0,0,0,1,1,1,1 enable PFC on TC4-7")
    p.add_option("-F", "--specific_pfc", dest="specific_pfc", metavar="LIST",
                 help="Set priority flow control for specific priorities. LIST is comma separated value for "
                      "each priority starting from 0 to 7. unwanted prirotiy need to mark with x. run in silent "
                      "mode and exit when finish config. Example: x,x,x,x,1,1,1,1 enables PFC on TC4-7 and "
                      "keeps TC0-3 with current state")
    p.add_option("-P", "--get_pfc", dest="get_pfc",
                 help="Get priority flow control status for specific priority. An index value of requested "
                      "priority starting from 0 to 7.Example: 2 returns status of TC2")
    p.add_option("-p", "--prio_tc", dest="prio_tc", metavar="LIST",
                 help="maps UPs to TCs. LIST is 8 comma separated TC numbers. Example: 0,0,0,0,1,1,1,1 maps UPs "
                      "0-3 to TC0, and UPs 4-7 to TC1")
    p.add_option("-s", "--tsa", dest="tsa", metavar="LIST",
                 help="Transmission algorithm for each TC. LIST is comma separated algorithm names for each TC. "
                      "Possible algorithms: strict, ets and vendor. Example: vendor,strict,ets,ets,ets,ets,ets,ets "
                      "sets TC0 to vendor, TC1 to strict, TC2-7 to ets.")
    p.add_option("-t", "--tcbw", dest="tc_bw", metavar="LIST",
                 help="Set minimal guaranteed %BW for ETS TCs. LIST is comma separated percents for each TC. "
                      "Values set to TCs that are not configured to ETS algorithm must be zero. Example: if "
                      "TC0,TC2 are set to ETS, then 10,0,90,0,0,0,0,0 will set TC0 to 10% and TC2 to 90%. "
                      "Percents must sum to 100.")
    p.add_option("-r", "--ratelimit", dest="ratelimit", metavar="LIST",
                 help="Rate limit for TCs (in Gbps). LIST is a comma separated Gbps limit for each TC. Example: "
                      "1,8,8 will limit TC0 to 1Gbps, and TC1,TC2 to 8 Gbps each.")
    p.add_option("-d", "--dcbx", dest="dcbx",
                 help="set dcbx mode to firmware controlled(fw) or OS controlled(os). Note, when in OS mode, "
                      "mlnx_qos should not be used in parallel with other dcbx tools such as lldptool")
    p.add_option("--trust", dest="trust", help="set priority trust state to pcp or dscp")
    p.add_option("--dscp2prio", dest="dscp2prio", action="append",
                 help="set/del a (dscp,prio) mapping, or 'flush' to delete all. Example 'set,30,2' maps dscp 30 "
                      "to priority 2. 'del,30,2' deletes the mapping. Deleting last dscp or using 'flush' will "
                      "automatically change trust to pcp.")
    if variant["defltprio_opt"]:
        p.add_option("--defltprio", dest="defltprio",
                     help="set/del default priority. Example 'set,2' sets default priority to 2. 'del,2' "
                          "deletes this setting.")
    p.add_option("--cable_len", dest="cable_len", help="set cable_len for buffer's xoff and xon thresholds")
    p.add_option("--prio2buffer", dest="prio2buffer", metavar="LIST",
                 help="maps priority to receive buffer. Example: 0,2,5,7,1,2,3,6 maps priorities 0,1,2,3,4,5,6,7 "
                      "to receive buffer 0,2,5,7,1,2,3,6")
    p.add_option("--buffer_size", dest="buffer_size", metavar="LIST",
                 help="Set receive buffer size LIST is comma separated percents for each buffer.For pfc enabled "
                      "buffer, the buffer size must be larger than the xoff_threshold. Example: "
                      "87296,87296,0,87296,0,0,0,0 sets receive buffer size for buffer 0,1,2,3,4,5,6,7 "
                      "respectively")
    p.add_option("-i", "--interface", dest="intf", help="Interface name")
    p.add_option("-a", action="store_true", dest="printall", default=False, help="Show all interface's TCs")
    return p


SET_OPTS = ("pfc", "specific_pfc", "prio_tc", "tsa", "tc_bw", "ratelimit", "trust", "dscp2prio",
            "defltprio", "cable_len", "prio2buffer", "buffer_size")


def parse_quiet(args, variant):
    """optparse with its stdout/stderr captured: (options, args, out, err, rc-or-None)."""
    parser = make_parser(variant)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            opts, rest = parser.parse_args(args)
    except SystemExit as exc:
        return None, None, out.getvalue(), err.getvalue(), (exc.code or 0), parser
    return opts, rest, out.getvalue(), err.getvalue(), None, parser


def is_write(tool, args):
    try:
        opts, dummy, dummy, dummy, rc, dummy = parse_quiet(args, VARIANTS["2023"])
    except Exception:
        return False
    if rc is not None or opts is None:
        return False
    if opts.dcbx not in (None, "get"):
        return True
    return any(getattr(opts, name, None) for name in SET_OPTS)


class Qos(object):
    """The netlink 'controller' over one netdev's volatile state."""

    def __init__(self, q, ops_budget):
        self.q = q
        self.budget = ops_budget    # None = unlimited; else number of kernel calls before EBUSY

    def _spend(self):
        if self.q is None:      # no DCB netlink ops on this netdev (veth, IPoIB, unknown name)
            raise NetlinkError(EOPNOTSUPP)
        if self.budget is not None:
            if self.budget <= 0:
                raise NetlinkError(EBUSY)
            self.budget -= 1

    # app table ------------------------------------------------------------
    def dscp_apps(self):
        if self.q is None:
            raise NetlinkError(EOPNOTSUPP)
        return [a for a in self.q["apps"] if a[0] == DCB_SEL_DSCP]

    def trust(self):
        return "dscp" if self.dscp_apps() else "pcp"

    def set_app(self, sel, prio, proto):
        self._spend()
        apps = self.q["apps"]
        if sel == DCB_SEL_DSCP:
            if proto >= 64:
                raise NetlinkError(EINVAL)
            old_prio = self.q["dscp2prio_hw"][proto]
            self.q["dscp2prio_hw"][proto] = prio
            old = [sel, old_prio, proto]
            if old in apps:
                apps.remove(old)
        elif [sel, prio, proto] in apps:
            return
        apps.insert(0, [sel, prio, proto])

    def del_app(self, sel, prio, proto):
        self._spend()
        apps = self.q["apps"]
        if sel == DCB_SEL_DSCP:
            if not self.dscp_apps() or self.q["dscp2prio_hw"][proto] != prio or [sel, prio, proto] not in apps:
                raise NetlinkError("Netlink error: No such file or directory (2)")
            apps.remove([sel, prio, proto])
            self.q["dscp2prio_hw"][proto] = 0
            return
        if [sel, prio, proto] not in apps:
            raise NetlinkError("Netlink error: No such file or directory (2)")
        apps.remove([sel, prio, proto])

    def set_pfc(self, pfc_en, delay):
        self._spend()
        self.q["pfc_en"] = pfc_en
        self.q["delay"] = delay

    def set_ets(self, prio_tc, tsa, tcbw):
        self._spend()
        have_ets = any(t == "ets" for t in tsa)
        total = sum(bw for t, bw in zip(tsa, tcbw) if t == "ets")
        if have_ets and total != 100:
            raise NetlinkError(EINVAL)   # mlx5e_dbcnl_validate_ets: "BW sum is illegal"
        self.q["prio_tc"], self.q["tsa"], self.q["tcbw"] = list(prio_tc), list(tsa), list(tcbw)

    def set_buffer(self, prio2buffer, buffer_size):
        self._spend()
        if sum(buffer_size) > self.q["tot_size"]:
            raise NetlinkError(EINVAL)
        self.q["prio2buffer"], self.q["buffer_size"] = list(prio2buffer), list(buffer_size)

    def set_dcbx(self, mode):
        self._spend()
        self.q["dcbx"] = mode

    def set_maxrate(self, rates):
        self._spend()
        self.q["maxrate"] = list(rates)


def parse_int(text, low, high, desc, usage):
    try:
        v = int(text)
        if v < low or v > high:
            raise ValueError("%d is not in the range %d..%d" % (v, low, high))
        return v
    except ValueError as e:
        raise Exit(1, "Bad value for %s: %s\n%s\n" % (desc, e, usage))


def count_ops(opts, q, variant):
    """How many kernel calls this invocation would make (for fail-after)."""
    n = 0
    if opts.dcbx in ("os", "fw"):
        n += 1
    if opts.cable_len or opts.pfc:
        n += 1
    if opts.dscp2prio:
        for item in opts.dscp2prio:
            n += len([a for a in q["apps"] if a[0] == DCB_SEL_DSCP]) if item == "flush" else 1
    if getattr(opts, "defltprio", None):
        n += 1
    if opts.trust:
        cur = "dscp" if any(a[0] == DCB_SEL_DSCP for a in q["apps"]) else "pcp"
        if opts.trust != cur:
            n += 64 if opts.trust == "dscp" else len([a for a in q["apps"] if a[0] == DCB_SEL_DSCP])
    if opts.prio2buffer or opts.buffer_size:
        n += 1
    if opts.ratelimit and variant["ratelimit"]:
        n += 1
    if opts.tsa or opts.tc_bw or opts.prio_tc:
        n += 1
    return n


def run(tool, args, ctx):
    variant = variant_of(ctx.profile)
    opts, rest, pout, perr, prc, parser = parse_quiet(args, variant)
    if prc is not None:
        return pout, perr, prc
    usage = parser.get_usage()
    if rest:
        return "Bad arguments\n" + usage + "\n", "", 1
    if opts.intf is None:
        return "Interface name is required\n" + usage + "\n", "", 1
    out = []
    from .. import state
    if state.lldpad_running(ctx.profile):
        out.append(LLDPAD_WARNING)
    q = ctx.nic.get("qos", {}).get(opts.intf)
    budget = None
    if ctx.fail_now and q is not None:
        budget = count_ops(opts, q, variant) // 2
    stderr = ""
    try:
        body = apply_and_report(opts, q, variant, usage, Qos(q, budget))
        rc = 0
    except Exit as exc:
        body, rc, stderr = exc.err, exc.rc, exc.stderr
    ctx.dirty = q is not None
    return "".join(out) + body, stderr, rc


def apply_and_report(opts, q, variant, usage, ctrl):
    pre = []   # lines printed before the report

    def fail(msg):
        raise Exit(1, "".join(pre) + msg)

    # dcbx
    if opts.dcbx is not None:
        if opts.dcbx in ("os", "fw"):
            try:
                ctrl.set_dcbx(opts.dcbx)
            except NetlinkError as e:
                fail("%s\n" % e)
        elif opts.dcbx != "get":
            fail("Invalid dcbx mode command. Refer to the help.\n")
    # get / specific pfc (silent modes)
    if opts.get_pfc is not None:
        try:
            idx = int(opts.get_pfc)
        except ValueError:
            idx = -1
        if idx < 0 or idx > 7:
            fail("pfc index must be in range of 0-7\n")
        if q is None:
            raise Exit(1, "".join(pre), GET_PFC_TRACEBACK)
        raise Exit(0, "".join(pre) + "%d\n" % ((q["pfc_en"] >> idx) & 1))
    if opts.specific_pfc:
        items = opts.specific_pfc.split(",")
        if len(items) != 8:
            fail("pfc list must have 8 items\n")
        if q is None:
            raise Exit(1, "".join(pre), GET_PFC_TRACEBACK)
        mask = q["pfc_en"]
        for i, t in enumerate(items):
            if t == "x":
                continue
            v = parse_int(t, 0, 1, "PFC", usage)
            mask = (mask & ~(1 << i)) | (v << i)
        try:
            ctrl.set_pfc(mask, q["delay"])
        except NetlinkError as e:
            fail("%s\n" % e)
        raise Exit(0, "".join(pre))
    # pfc / cable_len
    if q is None:
        q = {"delay": 0, "pfc_en": 0}
        nodcb = True
    else:
        nodcb = False
    pfc_delay = q["delay"]
    if opts.cable_len:
        pfc_delay = parse_int(opts.cable_len, 0, 0xFFFF, "cable_len", usage)
    pfc_en = q["pfc_en"]
    if opts.pfc:
        pfc_en, i = 0, 0
        for t in opts.pfc.split(","):
            if i >= 8:
                fail("Too many items for PFC\n")
            pfc_en |= parse_int(t, 0, 1, "PFC", usage) << i
            i += 1
        if i != 8:
            fail("pfc list must have 8 items\n")
    if opts.cable_len or opts.pfc:
        if nodcb and variant["head_errors"]:
            raise Exit(1, "".join(pre), PFC_TRACEBACK)   # HEAD reads the delay first and crashes
        try:
            ctrl.set_pfc(pfc_en, pfc_delay)
        except NetlinkError as e:
            fail("%s\n" % e)
    # dscp2prio
    if opts.dscp2prio and opts.trust:
        fail("trust and dscp2prio commands cannot be used at the same time.\n")
    ops = []
    for item in opts.dscp2prio or []:
        if item == "flush":
            ops.append(("flush", None, None))
            continue
        parts = item.split(",")
        if len(parts) != 3:
            if variant["head_errors"]:
                msg = ("not enough values to unpack (expected 3, got %d)" % len(parts) if len(parts) < 3
                       else "too many values to unpack (expected 3)")
                raise Exit(1, "".join(pre), DSCP_TRACEBACK.format(err=msg))
            fail("Invalid dscp2prio command. Refer to the help.\n")
        action, dscp, prio = parts
        try:
            dscp, prio = int(dscp), int(prio)
        except ValueError:
            if variant["head_errors"]:
                raise Exit(1, "".join(pre))
            fail("Invalid dscp2prio command. Refer to the help.\n")
        if action not in ("set", "del") or dscp > 63 or prio > 7:
            if variant["head_errors"]:
                raise Exit(1, "".join(pre))       # sys.exit(1) inside try: silent
            fail("Invalid dscp2prio command. Refer to the help.\n")
        ops.append((action, dscp, prio))
    try:
        for action, dscp, prio in ops:
            if action == "set":
                ctrl.set_app(DCB_SEL_DSCP, prio, dscp)
            elif action == "del":
                ctrl.del_app(DCB_SEL_DSCP, prio, dscp)
            else:
                for app in list(ctrl.dscp_apps()):
                    ctrl.del_app(*app)
    except NetlinkError:
        fail("dscp2prio command failed\n")
    # defltprio (until 2024-11)
    if variant["defltprio_opt"] and getattr(opts, "defltprio", None):
        try:
            action, prio = opts.defltprio.split(",")
            prio = int(prio)
            if action not in ("set", "del") or prio < 0 or prio > 7:
                raise ValueError()
        except ValueError:
            fail("Invalid defltprio command. Refer to the help.\n")
        try:
            if action == "set":
                ctrl.set_app(DCB_SEL_ETHERTYPE, prio, 0)
            else:
                ctrl.del_app(DCB_SEL_ETHERTYPE, prio, 0)
        except NetlinkError:
            fail("defltprio command failed\n")
    # trust
    if opts.trust and opts.trust not in ("dscp", "pcp"):
        fail("Invalid trust state command. Refer to the help.\n")
    try:
        if opts.trust and opts.trust != ctrl.trust():
            if opts.trust == "pcp":
                for app in list(ctrl.dscp_apps()):
                    ctrl.del_app(*app)
            else:
                for d in range(64):
                    ctrl.set_app(DCB_SEL_DSCP, d >> 3, d)
        ctrl.trust()
    except NetlinkError:
        if opts.trust:
            fail("Priority trust state is not supported on your system\n")
        pre.append("Priority trust state is not supported on your system\n")
    if nodcb:
        pre.append("Buffers commands are not supported on your system\n")
        if opts.buffer_size or opts.prio2buffer:
            fail("")
        pre.append("Rate limit is not supported on your system!\n")
        if opts.ratelimit:
            fail("")
        fail("ETS features are not supported on your system\n")
    # buffers
    prio2buffer, buffer_size = list(q["prio2buffer"]), list(q["buffer_size"])
    if opts.prio2buffer:
        i = 0
        for t in opts.prio2buffer.split(","):
            if i >= 8:
                fail("Too many items for prio2buffer\n")
            prio2buffer[i] = parse_int(t, 0, 7, "prio buffer", usage)
            i += 1
    if opts.buffer_size:
        i = 0
        for t in opts.buffer_size.split(","):
            if i >= 8:
                fail("Too many items for buffer_size\n")
            try:
                buffer_size[i] = int(t)
            except ValueError:
                fail("Buffers commands error\n")
            i += 1
    if opts.prio2buffer or opts.buffer_size:
        try:
            ctrl.set_buffer(prio2buffer, buffer_size)
        except NetlinkError:
            fail("Buffers commands error\n")
    # rate limit
    if opts.ratelimit:
        rates, i = [], 0
        for r in opts.ratelimit.split(","):
            if i >= 8:
                fail("Too many items for ratelimit\n")
            rates.append(parse_int(r, 0, 1000000, "ratelimit", usage) * 1000 * 1000)
            i += 1
        if i != 8:
            fail("ratelimit must have 8 items\n")
        if variant["ratelimit"]:
            try:
                ctrl.set_maxrate(rates)
            except NetlinkError:
                pre.append("Rate limit is not supported on your system!\n")
        else:
            pre.append("Rate limit is not supported on your system!\n")
    if not variant["ratelimit"]:
        pre.append("Rate limit is not supported on your system!\n")
    # ets
    prio_tc, tsa, tcbw = list(q["prio_tc"]), list(q["tsa"]), list(q["tcbw"])
    if opts.tsa:
        i = 0
        for t in opts.tsa.split(","):
            if i >= 8:
                fail("Too many items for TSA\n")
            if t not in TSA_NAMES:
                fail("('Bad TSA value: ', %r)\n%s\n" % (t, usage))
            tsa[i] = t
            i += 1
        if i != 8:
            fail("tsa list must have 8 items\n")
    if opts.tc_bw:
        i = 0
        for t in opts.tc_bw.split(","):
            if i >= 8:
                fail("Too many items for ETS BW\n")
            bw = parse_int(t, 0, 100, "ETS BW", usage)
            if tsa[i] != "ets" and bw != 0:
                fail("ETS BW for a strict/vendor TC must be 0\n%s\n" % usage)
            tcbw[i] = bw
            i += 1
        if i != 8:
            fail("tcbw list must have 8 items\n")
    if opts.prio_tc:
        i = 0
        for t in opts.prio_tc.split(","):
            if i >= 8:
                fail("Too many items in UP => TC mapping\n")
            prio_tc[i] = parse_int(t, 0, 7, "UP => TC mapping", usage)
            i += 1
        if i != 8:
            fail("prio_tc list must have 8 items\n")
    if opts.tsa or opts.tc_bw or opts.prio_tc:
        try:
            ctrl.set_ets(prio_tc, tsa, tcbw)
        except NetlinkError as e:
            fail("%s\n" % e)
    return "".join(pre) + report(q, variant, printall=opts.printall)


def report(q, variant, printall=False):
    """pretty_print() of the chosen mlnx_qos release."""
    lines = []
    if variant.get("dcbx_line", True):
        lines.append("DCBX mode: OS controlled" if q["dcbx"] == "os" else "DCBX mode: Firmware controlled")
    apps = q["apps"]
    trust = "dscp" if any(a[0] == DCB_SEL_DSCP for a in apps) else "pcp"
    trust_line = variant.get("trust_line", "state")
    if trust_line == "mode":
        lines.append("Priority trust mode: " + trust)
    elif trust_line == "state":
        lines.append("Priority trust state: " + trust)
    if trust == "dscp" and trust_line == "state":
        lines.append("dscp2prio mapping:")
        per = [""] * 8
        for sel, prio, proto in apps:
            if sel == DCB_SEL_DSCP:
                per[prio] += "%02d," % proto
        for prio in range(8):
            text, pad = per[prio], "\tprio:%d dscp:" % prio
            while len(text) > 24:
                lines.append(pad + text[:24])
                text = text[24:]
            if text:
                lines.append(pad + text)
    if variant.get("default_prio"):
        lines.append("default priority:")
        for sel, prio, proto in apps:
            if sel == DCB_SEL_ETHERTYPE and proto == 0:
                lines.append("\tprio:%d" % prio)
    buffers = variant.get("buffers", True)   # False: buffer query unsupported (old kernels)
    if buffers:
        msg = "Receive buffer size (bytes): " + "".join("%1d," % b for b in q["buffer_size"])
        if variant["buffer_suffix"]:
            msg += "%s=%d" % (variant["buffer_suffix"], q["tot_size"])
        lines.append(msg)
    if variant.get("cable_line", True):
        lines.append("Cable len: %d" % q["delay"])
    lines.append("PFC configuration:")
    lines.append("\tpriority    0   1   2   3   4   5   6   7")
    lines.append("\tenabled     " + "".join("%1d   " % ((q["pfc_en"] >> up) & 1) for up in range(8)))
    if buffers:
        lines.append("\tbuffer      " + "".join("%1d   " % q["prio2buffer"][up] for up in range(8)))
    if variant.get("pfc_blank"):
        lines.append("")        # python 2 'print ""' of the 2017 releases
    tc2up = {}
    if printall:
        for tc in range(8):
            tc2up[tc] = []
    for up, tc in enumerate(q["prio_tc"]):
        tc2up.setdefault(tc, []).append(up)
    order = sorted(tc2up) if variant["sorted_tcs"] else list(tc2up)
    for tc in order:
        msg = ""
        if variant["ratelimit"]:
            rate = q["maxrate"][tc]
            r = "%.1f Gbps" % (float(rate / 1000) / 1000) if rate > 0 else "unlimited"
            msg = "tc: %d ratelimit: %s, tsa: " % (tc, r)
        tsa = q["tsa"][tc]
        msg += ("ets, bw: %s%%" % q["tcbw"][tc]) if tsa == "ets" else tsa
        lines.append(msg)
        for up in tc2up[tc]:
            lines.append("\t priority:  %s" % up)
    return "\n".join(lines) + "\n"
