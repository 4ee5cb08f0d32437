"""The call/write log: one JSON object per line in $FABRICSIM_STATE_DIR/log.jsonl."""
import json
import os
import time

from . import paths


def _path():
    return paths.state_file("log.jsonl")


def append(tool, kind, argv=None, path=None, rc=None, err=None, value=None):
    now = time.time()
    rec = {"ts": round(now, 6),
           "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + ".%06dZ" % int((now % 1) * 1e6),
           "tool": tool, "kind": kind}
    if argv is not None:
        rec["argv"] = list(argv)
    if path is not None:
        rec["path"] = path
    if value is not None:
        rec["value"] = value
    if rc is not None:
        rec["rc"] = rc
    if err:
        rec["errno"] = err
    os.makedirs(paths.state_dir(), exist_ok=True)
    line = (json.dumps(rec, sort_keys=True) + "\n").encode()
    fd = os.open(_path(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)      # one write(2) per record: O_APPEND keeps lines whole
    finally:
        os.close(fd)
    return rec


def records(writes_only=False):
    out = []
    try:
        with open(_path()) as handle:
            for line in handle:
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if writes_only and rec.get("kind") != "write":
                    continue
                out.append(rec)
    except (IOError, OSError):
        pass
    return out


def clear():
    try:
        os.unlink(_path())
    except OSError:
        pass


def format_record(rec):
    if "argv" in rec:
        what = " ".join(rec["argv"])
    else:
        what = rec.get("path", "")
        if "value" in rec:
            what += " = " + rec["value"]
    extra = ""
    if rec.get("errno"):
        extra = " (errno %d)" % rec["errno"]
    elif rec.get("rc"):
        extra = " (rc %d)" % rec["rc"]
    return "%s %s %s %s%s" % (rec["time"], rec["tool"], rec["kind"], what, extra)
