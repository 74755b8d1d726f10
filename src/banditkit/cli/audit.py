"""``banditkit audit``: the replicability audit of a registered policy on a named instance
(pairs of executions sharing the internal randomness)."""

from __future__ import annotations

import argparse
import json
import sys

from .args import key_value, non_negative_int, positive_int, unique_params
from .output import json_default, refuse

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("policy", metavar="POLICY",
                        help="policy name (UCB1, ReplicableElimination, ...)")
    parser.add_argument("--instance", required=True, metavar="NAME",
                        help="named instance (e.g. bernoulli)")
    parser.add_argument("--param", type=key_value, action="append", default=[],
                        metavar="K=V", help="policy parameter (repeatable), e.g. rho=0.1")
    parser.add_argument("--instance-param", type=key_value, action="append", default=[],
                        metavar="K=V", help="instance parameter (repeatable), e.g. K=4")
    parser.add_argument("--pairs", type=positive_int, required=True,
                        help="pairs of executions sharing the internal randomness")
    parser.add_argument("--horizon", type=positive_int, default=None, metavar="T",
                        help="pulls per execution (required for regret policies)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="root seed (default 0)")
    parser.add_argument("--workers", type=positive_int, default=1,
                        help="processes over which pairs are spread (default 1)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter

    def format_help() -> str:
        # the registries import every algorithm module: read them only when help is asked
        from ..envs.instances import instance_names
        from ..registry import policy_names

        parser.epilog = _wrapped("policies: " + ", ".join(policy_names())) + "\n\n" + \
            _wrapped("instances: " + ", ".join(instance_names()))
        return argparse.ArgumentParser.format_help(parser)

    parser.format_help = format_help  # type: ignore[method-assign]


def _wrapped(text: str, width: int = 78) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width, subsequent_indent="  ",
                                   break_on_hyphens=False))


def run(args: argparse.Namespace) -> int:
    import functools

    from ..envs.instances import instance_names, make_instance
    from ..experiments.replicability import audit
    from ..registry import ALIASES, check_policy_params, get_policy, policy_names
    from ..rng import stream

    if args.policy not in policy_names() and args.policy not in ALIASES:
        return refuse(f"argument POLICY: unknown policy {args.policy!r}; known: "
                       f"{', '.join(policy_names())}")
    if args.instance not in instance_names():
        return refuse(f"argument --instance: unknown instance {args.instance!r}; known: "
                       f"{', '.join(instance_names())}")
    entry = get_policy(args.policy)
    try:
        params = unique_params(args.param)
        unique_params(args.instance_param, "--instance-param")
    except ValueError as error:
        return refuse(str(error))
    try:
        check_policy_params(entry, params)
    except ValueError as error:
        return refuse(f"argument --param: {error}")
    try:
        env = make_instance(args.instance, rng=stream(args.seed, "audit", "instance"),
                            **dict(args.instance_param))
    except (ValueError, TypeError) as error:
        return refuse(f"argument --instance-param: {error}")
    rho = params.get("rho", entry.parameters().get("rho"))
    factory = functools.partial(entry.factory, horizon=args.horizon)
    try:
        # build one first so that bad parameter values are refused before any work
        probe = factory(env, stream(args.seed, "audit", 0, "algorithm"), **params)
        if args.horizon is not None:
            # every execution's log is kept (and a lock-step engine holds each pull sequence)
            from ..simulate import check_memory

            check_memory(probe, args.horizon, executions=2 * args.pairs, bytes_per_pull=8)
        result = audit(factory, env, pairs=args.pairs, seed=args.seed, horizon=args.horizon,
                       params=params, rho=rho, workers=args.workers,
                       progress=not args.json, name=args.policy, instance=args.instance)
    except (ValueError, TypeError) as error:
        return refuse(str(error))
    if args.json:
        json.dump(result.summary(), sys.stdout, indent=2, default=json_default)
        print()
    else:
        print(result.render())
    return 0
