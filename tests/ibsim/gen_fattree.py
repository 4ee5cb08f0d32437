#!/usr/bin/env python
"""Write an ibsim fabric file for a two-level fat tree (leaf and spine switches, single-port HCAs).

    python3 tests/ibsim/gen_fattree.py --radix 36 --hcas 324 > net.ft36-324

Each leaf switch has radix/2 ports down to HCAs and radix/2 uplinks, spread round-robin over
the spines (so every leaf reaches every spine, with parallel links when there are fewer spines
than uplinks). The spine count is the smallest that gives every uplink a spine port:
ceil(leaves * radix/2 / radix). A two-level tree of radix-k switches holds at most k*k/2 HCAs
(648 for 36 ports, 2048 for 64 ports); more is refused.

HCA names are H<leaf>-<n> (H01-01 ... ), leaves L<nn>, spines S<nn>. The header comment names
three HCAs for the failover bench (tests/ibsim/failover_bench.sh): SM A on the first HCA of the
first leaf, SM B on the first HCA of the last leaf, queries from the second HCA of the first leaf.
Pass --bench-env to print those as shell assignments (A_HOST=... B_HOST=... Q_HOST=...) instead
of the fabric.
"""

import argparse
import math
import sys


def fat_tree(radix, hcas):
    """Return (leaves, spines, links): names and a list of (node, port, node, port) links."""
    if radix < 4 or radix % 2 or radix > 254:
        raise ValueError(f"radix must be an even number of ports from 4 to 254, got {radix}")
    down = radix // 2
    if hcas < 3:
        raise ValueError(f"hcas must be at least 3 (two SMs and a query port), got {hcas}")
    if hcas > radix * down:
        raise ValueError(f"hcas={hcas} does not fit a two-level fat tree of {radix}-port switches "
                         f"(at most {radix * down})")
    n_leaves = max(2, math.ceil(hcas / down))
    n_spines = max(1, math.ceil(n_leaves * down / radix))
    leaves = [f"L{i + 1:02d}" for i in range(n_leaves)]
    spines = [f"S{i + 1:02d}" for i in range(n_spines)]
    links = []
    # HCAs spread evenly over the leaves, the first leaves get the remainder.
    per_leaf = [hcas // n_leaves + (1 if i < hcas % n_leaves else 0) for i in range(n_leaves)]
    hca_names = []
    for li, leaf in enumerate(leaves):
        for n in range(per_leaf[li]):
            name = f"H{li + 1:02d}-{n + 1:02d}"
            hca_names.append(name)
            links.append((leaf, n + 1, name, 1))
    spine_next = [1] * n_spines
    for li, leaf in enumerate(leaves):
        for u in range(down):
            si = (li * down + u) % n_spines
            links.append((leaf, down + u + 1, spines[si], spine_next[si]))
            spine_next[si] += 1
    if max(spine_next) - 1 > radix:
        raise ValueError("internal: a spine ran out of ports")
    return leaves, spines, hca_names, links


def bench_hosts(hca_names):
    first_leaf = [h for h in hca_names if h.startswith(hca_names[0].split("-")[0] + "-")]
    last_leaf_prefix = hca_names[-1].split("-")[0] + "-"
    return {"A_HOST": first_leaf[0], "Q_HOST": first_leaf[1],
            "B_HOST": next(h for h in hca_names if h.startswith(last_leaf_prefix))}


def render(radix, hcas):
    leaves, spines, hca_names, links = fat_tree(radix, hcas)
    ports = {}
    for a, ap, b, bp in links:
        ports.setdefault(a, []).append((ap, b, bp))
        ports.setdefault(b, []).append((bp, a, ap))
    hosts = bench_hosts(hca_names)
    out = [
        f"# ibsim fabric: two-level fat tree of {radix}-port switches, written by tests/ibsim/gen_fattree.py",
        f"# --radix {radix} --hcas {hcas}: {len(leaves)} leaves, {len(spines)} spines, {len(hca_names)} HCAs, "
        f"{len(links)} links",
        "# bench: " + " ".join(f"{k}={v}" for k, v in sorted(hosts.items())),
        "",
    ]
    for name in leaves + spines:
        out.append(f'Switch\t{radix} "{name}"')
        out.extend(f'[{p}]\t"{peer}"[{pp}]' for p, peer, pp in sorted(ports.get(name, [])))
        out.append("")
    for name in hca_names:
        out.append(f'Hca\t1 "{name}"')
        out.extend(f'[{p}]\t"{peer}"[{pp}]' for p, peer, pp in sorted(ports[name]))
        out.append("")
    return "\n".join(out), hosts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--radix", type=int, default=36, help="ports per switch (even, 4-254)")
    parser.add_argument("--hcas", type=int, required=True, help="number of single-port HCAs")
    parser.add_argument("--bench-env", action="store_true",
                        help="print A_HOST/B_HOST/Q_HOST for failover_bench.sh instead of the fabric")
    args = parser.parse_args(argv)
    try:
        text, hosts = render(args.radix, args.hcas)
    except ValueError as exc:
        print(f"gen_fattree: {exc}", file=sys.stderr)
        return 2
    if args.bench_env:
        print(" ".join(f"{k}={v}" for k, v in sorted(hosts.items())))
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
