"""Benchmark hierarchical codes against flat ones: decode, encode, certificates, scale.

Prints side-by-side tables and writes ``bench/results/hierarchical.json``:

1. the client's decode (no cluster): a real flat ``MDSCode(n, k)`` against a
   ``HierarchicalCode`` of the same redundancy, from the same erasure pattern (one
   worker of each group lost, within both codes' guarantees), medians over
   ``--repeats``; the hierarchical decoder caches its
   small factorisations per pattern, so it is timed cold (cache cleared, as the
   flat decoder always is) and warm;
2. encoding A (``encode_operands``) for the same pairs;
3. certified worst-case condition numbers of hierarchical layouts up to n = 4096,
   and the adversarial-search lower bound of a flat code at (64, 52)
   (``docs/theory/hierarchical.md``);
4. the simulator at 10^4 workers: CPU seconds for 1,000 simulated jobs, with and
   without the cost model's costs, and the exact expected latency beside the mean.

Timings are wall-clock medians on a shared machine (the load is printed).

Usage: ``python bench/hierarchical.py [--quick] [--repeats 7]``.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from functools import partial

import numpy as np
from _harness import median_time, write_results

from coded.codes import HierarchicalCode, MDSCode
from theory import RuntimeCosts, expected_latency_hierarchical, simulate_hierarchical

PAIRS = {  # n: (flat k, hierarchical layout), equal redundancy n / prod k_l
    64: (49, [(8, 7), (8, 7)]),
    256: (196, [(16, 14), (16, 14)]),
}


def _pattern(code: HierarchicalCode) -> list[int]:
    """Every worker but one member of each group (a different one in each)."""
    groups, size = code.levels[0][0], code.n // code.levels[0][0]
    lost = {g * size + g % size for g in range(groups)}
    return [w for w in range(code.n) if w not in lost]


def bench_decode(ns, repeats, rows, c, rng):
    out = []
    for n in ns:
        k, levels = PAIRS[n]
        flat, tree = MDSCode(n, k), HierarchicalCode(n, levels)
        alive = _pattern(tree)
        assert tree.is_decodable(alive)
        assert flat.is_decodable(alive)
        A = rng.standard_normal((rows * n, 3))
        B = rng.standard_normal((3, c))
        row = {"n": n, "flat_k": k, "levels": levels, "alive": len(alive)}
        for name, code in (("flat", flat), ("hierarchical", tree)):
            encode = partial(code.encode_operands, A, B)
            enc = encode()
            results = {w: enc.lefts[w] @ enc.right(w) for w in alive}
            row[f"{name}_encode_s"] = median_time(encode, repeats)

            def cold(code=code, enc=enc, results=results):
                getattr(code, "_factors", {}).clear()
                return code.decode_results(enc, results)

            row[f"{name}_decode_s"] = median_time(cold, repeats)
            error = np.linalg.norm(cold() - A @ B) / np.linalg.norm(A @ B)
            row[f"{name}_relative_error"] = float(error)
        row["hierarchical_warm_decode_s"] = median_time(
            partial(tree.decode_results, enc, results), repeats
        )
        row["decode_ratio"] = row["hierarchical_decode_s"] / row["flat_decode_s"]
        out.append(row)
        print(
            f"n={n:>4}  flat ({n}, {k}) decode {row['flat_decode_s'] * 1e3:8.2f} ms"
            f"  hierarchical {levels} {row['hierarchical_decode_s'] * 1e3:7.2f} ms"
            f" (warm {row['hierarchical_warm_decode_s'] * 1e3:6.2f} ms)"
            f"  ratio {row['decode_ratio']:.3f}   encode"
            f" {row['flat_encode_s'] * 1e3:7.2f} vs"
            f" {row['hierarchical_encode_s'] * 1e3:7.2f} ms"
        )
    return out


def bench_certificates(quick):
    out = []
    layouts = [[(8, 7)] * 2, [(16, 14)] * 2, [(16, 14)] * 3, [(8, 7)] * 4]
    for levels in layouts:
        n = math.prod(size for size, _ in levels)
        start = time.process_time()
        bound = HierarchicalCode(n, levels).worst_condition_number()
        seconds = time.process_time() - start
        redundancy = n / math.prod(k for _, k in levels)
        out.append(
            {
                "n": n,
                "levels": levels,
                "redundancy": redundancy,
                "bound": bound.value,
                "certified": bound.certified,
                "cpu_s": seconds,
            }
        )
        print(
            f"n={n:>5} {levels}  redundancy {redundancy:.3f}  certified cond <= "
            f"{bound.value:8.1f} ({bound.certified})"
        )
    if not quick:
        start = time.process_time()
        flat = MDSCode(64, 52).worst_condition_number(samples=2000, starts=4)
        out.append(
            {
                "n": 64,
                "flat_k": 52,
                "lower_bound": flat.value,
                "exact": flat.exact,
                "cpu_s": time.process_time() - start,
            }
        )
        print(
            f"flat (64, 52): search lower bound {flat.value:.3g} (exact={flat.exact})"
        )
    return out


def bench_simulator(trials):
    levels = [(100, 89), (100, 89)]
    costs = RuntimeCosts(
        message_seconds=1e-3,
        leader_message_seconds=2e-4,
        byte_seconds=1e-9,
        flop_seconds=1e-10,
    )
    out = {"levels": levels, "trials": trials}
    for name, kwargs in (
        ("plain", {}),
        ("costs", {"costs": costs, "product_bytes": 8e5}),
    ):
        start = time.process_time()
        sim = simulate_hierarchical(
            levels, a=1.0, mu=1.0, trials=trials, rng=0, **kwargs
        )
        out[f"{name}_cpu_s"] = time.process_time() - start
        out[f"{name}_mean"], out[f"{name}_stderr"] = sim.mean, sim.stderr
    out["exact"] = expected_latency_hierarchical(levels, a=1.0, mu=1.0)
    print(
        f"10^4 workers {levels}, {trials} jobs: {out['plain_cpu_s']:.2f} s CPU "
        f"(mean {out['plain_mean']:.4g} +- {out['plain_stderr']:.1g}, exact "
        f"{out['exact']:.4g}); with costs {out['costs_cpu_s']:.2f} s "
        f"(mean {out['costs_mean']:.4g})"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    repeats = 3 if args.quick else max(5, args.repeats)
    load = os.getloadavg()
    print(f"load average {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}")
    rng = np.random.default_rng(0)
    payload = {
        "load_average": load,
        "repeats": repeats,
        "decode": bench_decode(
            [64] if args.quick else [64, 256],
            repeats,
            rows=4 if args.quick else 64,
            c=8,
            rng=rng,
        ),
        "certificates": bench_certificates(args.quick),
        "simulator": bench_simulator(200 if args.quick else 1000),
    }
    write_results("hierarchical", payload, quick=args.quick)


if __name__ == "__main__":
    main()
