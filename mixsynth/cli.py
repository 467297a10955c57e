"""Command line: ``mixsynth synthesize | fit | sample | dataset | split | report``.

Settings come from the defaults, then the spec's sections, then the flags, all read once
into a ``config.RunConfig`` before anything runs. Errors print one line and exit with status 2; messages from bad input name
the column and the fix, never a data value. SIGTERM and SIGINT stop a command: its worker
processes end, no file is left half-written, and it exits with 128 + the signal's number.
"""
import argparse
import json
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from .config import RunConfig, chain_slots, default_chains, deprecations
from .model import CopulaSynthesizer
from .guards import describe_seconds, fit_seconds
from .progress import SweepProgress
from .schema import infer_spec, load_spec
from .tableio import InputError, read_table, write_table
from .checkpoint import CHECKPOINT_SECONDS, CheckpointFolder
from .workers import Stopped, stop_on_signals

FLAGS = ("sweeps", "burn_in", "thin", "chains", "factors", "minutes", "method", "rows", "m")   # RunConfig.from_spec
MAX_NOTES = 10   # input notes printed by the command line
DATASETS = ("ncbirths", "cps1988", "nhefs", "kdd-census", "paper-layout", "paper-simulation")


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        with stop_on_signals():
            args.run(args)
    except (Stopped, KeyboardInterrupt) as exc:   # workers are ended and half-written files removed on the way
        signum = exc.signum if isinstance(exc, Stopped) else signal.SIGINT
        print(f"mixsynth: stopped by {signal.Signals(signum).name} during '{args.command}': its workers "
              "have ended and no file is half-written", file=sys.stderr)
        return 128 + signum
    except InputError as exc:
        print(f"mixsynth: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # messages of other errors may quote data: keep them out
        if args.debug:
            raise
        print(f"mixsynth: error: {type(exc).__name__} while running '{args.command}' "
              "(details withheld as they may quote confidential values; rerun with --debug)",
              file=sys.stderr)
        return 2
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mixsynth", description=__doc__.splitlines()[0])
    p.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    sub = p.add_subparsers(dest="command", required=True)

    syn = sub.add_parser("synthesize", help="fit the copula to REAL and write synthetic file(s)")
    syn.add_argument("real", type=Path)
    syn.add_argument("--out", type=Path, required=True, help="synthetic file (.csv or .parquet)")
    syn.add_argument("--model", type=Path, help="also save the fitted model here (confidential)")
    _fit_options(syn)
    _sample_options(syn)
    syn.set_defaults(run=_synthesize)

    fit = sub.add_parser("fit", help="fit the copula to REAL and save the model")
    fit.add_argument("real", type=Path)
    fit.add_argument("--model", type=Path, required=True, help="model file to write (.npz)")
    fit.add_argument("--resume", action="store_true",
                     help="go on from the chains' checkpoints of a stopped fit with the same inputs "
                          "(kept beside the model in MODEL.chains/ until the fit is complete)")
    _fit_options(fit)
    fit.set_defaults(run=_fit)

    sample = sub.add_parser("sample", help="write synthetic file(s) from a saved model")
    sample.add_argument("model", type=Path)
    sample.add_argument("--out", type=Path, required=True)
    sample.add_argument("--seed", type=int, default=0)
    _sample_options(sample)
    sample.set_defaults(run=_sample)

    data = sub.add_parser("dataset", help="write a bundled public or simulated table to a file")
    data.add_argument("name", choices=DATASETS)
    data.add_argument("out", type=Path)
    data.add_argument("--rows", type=int, help="rows of a simulated table")
    data.add_argument("--seed", type=int, default=0)
    data.set_defaults(run=_dataset)

    split = sub.add_parser("split", help="keep a random share of REAL's rows out of synthesis (a holdout)")
    split.add_argument("real", type=Path)
    split.add_argument("--train", type=Path, required=True, help="rows to synthesize from")
    split.add_argument("--holdout", type=Path, required=True, help="rows kept back for the report")
    split.add_argument("--fraction", type=float, default=0.2, help="share of rows held out (0.2)")
    split.add_argument("--seed", type=int, default=0)
    split.set_defaults(run=_split)

    rep = sub.add_parser("report", help="utility and disclosure-risk report of SYN file(s) against REAL")
    rep.add_argument("real", type=Path)
    rep.add_argument("syn", type=Path, nargs="+", help="synthetic file(s); m > 1 files are combined")
    rep.add_argument("--spec", type=Path,
                     help="YAML spec with the `report:` (and optional `release:`) sections "
                          "(default: kinds inferred, no target analyses, no decision)")
    rep.add_argument("--out", type=Path, required=True, help="directory for report.json and summary.md")
    rep.add_argument("--holdout", type=Path, help="real rows kept out of synthesis (for TSTR and DCR)")
    rep.add_argument("--model", type=Path, help="the fitted model (.npz): adds its convergence (R-hat, ESS)")
    rep.add_argument("--seed", type=int, default=0)
    rep.set_defaults(run=_report)
    return p


def _fit_options(p):
    p.add_argument("--spec", type=Path, help="YAML spec (kinds, roles, settings)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sweeps", type=int, help="Gibbs sweeps per chain (burn-in: half of them unless --burn-in; "
                                              "thinned to 500 kept draws a chain unless --thin)")
    p.add_argument("--burn-in", type=int, dest="burn_in")
    p.add_argument("--thin", type=int)
    p.add_argument("--chains", type=int)
    p.add_argument("--factors", type=int)
    p.add_argument("--minutes", type=float, help="each chain stops after this many minutes, mixed or not "
                                                 "(default: the spec's sampler.minutes, else 60)")
    p.add_argument("--method", choices=("rpl", "rl"), help="rpl (default) or the paper's RL baseline")
    p.add_argument("--checkpoint-every", type=float, default=CHECKPOINT_SECONDS, dest="checkpoint_every",
                   metavar="SECONDS", help="with --model, each chain saves its state (confidential) "
                                           f"this often (default {CHECKPOINT_SECONDS:.0f})")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress (default: a bar on a terminal, else a plain line every few seconds)")


def _sample_options(p):
    p.add_argument("--m", type=int, help="number of synthetic files, from m posterior draws")
    p.add_argument("--rows", type=int, help="rows per synthetic file (default: as the real file)")


def _fitted(args) -> CopulaSynthesizer:
    raw = load_spec(args.spec) if args.spec else {}
    table = read_table(args.real)
    spec = infer_spec(table, raw)
    config = RunConfig.from_spec(raw, spec.columns, {k: getattr(args, k, None) for k in FLAGS})
    settings = config.sampler
    for line in deprecations(raw):
        print(line)
    _print_notes(spec)
    bar = SweepProgress(settings.lengths, settings.chains, enabled=args.progress,
                        announce=_announce_fit)
    started = time.monotonic()
    checkpoints = _checkpoints(args)
    model = CopulaSynthesizer(spec, config, seed=args.seed).fit(table, monitor=bar, checkpoints=checkpoints)
    bar.close()
    conv = model.convergence_
    show = lambda x, fmt: "n/a" if x is None else format(x, fmt)
    print(f"fitted {model.n_rows_:,} rows x {len(spec.columns)} columns ({len(model.columns_)} latent, "
          f"k = {model.factors_}) in {time.monotonic() - started:.1f} s; "
          f"C: max R-hat {show(conv['rhat_max'], '.3f')}, min bulk ESS {show(conv['ess_bulk_min'], '.0f')}"
          + (f" (chains of {' and '.join(f'{x:,}' for x in conv['sweeps_per_chain'])} sweeps)"
             if "sweeps_per_chain" in conv else ""))
    stopped = conv.get("stopped_by_time_budget", 0)
    if stopped:
        print(f"not converged: {stopped} chain(s) reached the time budget of {settings.minutes:g} min "
              "(sampler.minutes) before their draws mixed; the release rules on R-hat and ESS judge them")
    st = model.stage_seconds_
    print(f"  of which marginals and screen {st['marginals']:.1f} s, chains {st['chains']:.1f} s, "
          f"BART for {len(model.responses_)} response(s) {st['responses']:.1f} s")
    return model


def _print_notes(spec) -> None:
    """How the input was read (columns and counts, never values), one line each, at most MAX_NOTES."""
    for note in spec.notes[:MAX_NOTES]:
        print(f"input: {note}")
    if len(spec.notes) > MAX_NOTES:
        print(f"input: ... and {len(spec.notes) - MAX_NOTES} more column notes (all in the report and the record)")


def _announce_fit(model: CopulaSynthesizer) -> None:
    """The BART responses (chosen by the screen, or declared) and the expected time of the
    chains and of BART, printed once the layout and factors are known."""
    if model.screen_ is not None:
        print(model.screen_.summary())
        for score in model.screen_.scores:
            if not score.chosen:
                print(f"  {score.name}: {score.reason}")
    elif model.layout_.responses:
        print(f"responses modelled by BART after the copula (declared): {', '.join(model.layout_.responses)}")
    if model.derived_:
        print(f"columns derived exactly from another ({len(model.derived_)}): "
              f"{', '.join(d.describe() for d in model.derived_)}")
    if model.refined_:
        print(f"columns kept within the categorical they determine ({len(model.refined_)}): "
              f"{', '.join(r.describe() for r in model.refined_)}")
    rules = model.implications()
    if rules:
        print(f"skip patterns kept exactly ({len(rules)}): {'; '.join(rules)}")
    s = model.settings
    lengths = s.lengths
    seconds = [fit_seconds(model.copula_rows_, len(model.columns_), model.factors_, x, s.chains, s.minutes)
               for x in lengths]
    rows = (f"{model.copula_rows_:,} rows" if model.copula_rows_ == model.n_rows_ else
            f"a sample of {model.copula_rows_:,} of the {model.n_rows_:,} rows (sampler.rows)")
    layout = f"sampling {rows} x {len(model.columns_)} latent columns x {model.factors_} factors"
    if s.minutes is not None:
        print(f"each chain stops after {s.minutes:g} min (sampler.minutes), mixed or not")
    per = "chain slot (MIXSYNTH_CHAIN_SLOTS)" if chain_slots() is not None else "core"
    chains = f"{s.chains} chain(s)" + (f" (one per {per}; --chains sets another count)"
                                       if s.chains == default_chains() else "")
    bart = model.response_seconds()
    then = (f"; then BART for {len(model.layout_.responses)} response(s), about {describe_seconds(bart)}"
            if model.layout_.responses else "")
    if len(lengths) == 1:
        print(f"{layout}, {s.sweeps:,} sweeps x {chains}: expected about {describe_seconds(seconds[0])}{then}",
              flush=True)
    else:
        print(f"{layout}, {chains}, each until its draws have mixed: after "
              f"{', '.join(f'{x:,}' for x in lengths)} sweeps (about {describe_seconds(seconds[0])} to "
              f"{describe_seconds(seconds[-1])}){then}", flush=True)


def _write_synthetic(model: CopulaSynthesizer, args, seed: int) -> None:
    flags = {k: getattr(args, k) for k in ("rows", "m") if getattr(args, k) is not None}
    if flags:   # `mixsynth sample` on a saved model: its configuration with these flags over it
        model.config = replace(model.config, synthesis=replace(model.config.synthesis, **flags))
    started = time.monotonic()
    tables = model.sample_release(seed)
    m = len(tables)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    paths = [args.out] if m == 1 else [args.out.with_name(f"{args.out.stem}_{i}{args.out.suffix}")
                                       for i in range(1, m + 1)]
    for path, table in zip(paths, tables):
        write_table(table, path)
    print(f"synthesized {m} file(s) of {len(tables[0]):,} rows in {time.monotonic() - started:.1f} s:")
    for path in paths:
        print(f"  {path}")


def _checkpoints(args) -> CheckpointFolder | None:
    """The chains' checkpoints beside --model (MODEL.chains/); earlier ones are dropped
    unless --resume asks to go on from them."""
    if not args.model:
        return None
    folder = _checkpoint_folder(args)
    if not getattr(args, "resume", False):
        folder.remove()
    elif not folder.folder.is_dir():
        print(f"resume: no checkpoints beside {args.model.name}: the chains start from sweep 0")
    return folder


def _checkpoint_folder(args) -> CheckpointFolder:
    return CheckpointFolder(args.model.with_name(args.model.name + ".chains"), args.checkpoint_every)


def _save_model(model: CopulaSynthesizer, args) -> None:
    """The model file (confidential); the chains' checkpoints go once it is written."""
    args.model.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.model)
    _checkpoint_folder(args).remove()
    print(f"model (confidential): {args.model}")


def _synthesize(args):
    _check_output(args.out)
    model = _fitted(args)
    if args.model:
        _save_model(model, args)
    _write_synthetic(model, args, args.seed)


def _fit(args):
    _save_model(_fitted(args), args)


def _sample(args):
    _check_output(args.out)
    try:
        model = CopulaSynthesizer.load(args.model)
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        raise InputError(f"cannot read model file '{args.model}': write one with `mixsynth fit`") from None
    _write_synthetic(model, args, args.seed)


def _dataset(args):
    from . import datasets
    loaders = {"ncbirths": datasets.load_ncbirths, "cps1988": datasets.load_cps1988,
               "nhefs": datasets.load_nhefs, "kdd-census": datasets.load_kdd_census}
    if args.name in loaders:
        table = loaders[args.name]()
    else:
        simulate = datasets.paper_layout if args.name == "paper-layout" else datasets.paper_simulation
        table = simulate(**({"n": args.rows} if args.rows else {}), seed=args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_table(table, args.out)
    print(f"{args.name}: {len(table):,} rows x {table.shape[1]} columns -> {args.out}")


def _report(args):
    from .report.build import build_report, report_section
    from .report.outputs import write_report
    from .report.release import decide
    from .report.build import analyses_not_declared
    raw = load_spec(args.spec) if args.spec else {}
    real = read_table(args.real)
    spec = infer_spec(real, raw)
    report_section(spec)  # bad report or release sections fail before the report is computed
    _print_notes(spec)
    if not args.spec:
        print("no --spec: kinds inferred from the real file, no roles (so no attribute inference) "
              "and no release decision")
    undeclared = analyses_not_declared(spec)
    if undeclared:
        print(f"a spec's `report:` section would add: {', '.join(undeclared)}")
    release = RunConfig.from_spec(raw, spec.columns).release   # checked here, before the report is computed
    syns = [read_table(path) for path in args.syn]
    holdout = read_table(args.holdout) if args.holdout else None
    if args.out.exists() and not args.out.is_dir():
        raise InputError(f"--out '{args.out.name}' is a file; give a directory")
    started = time.monotonic()
    model = CopulaSynthesizer.load(args.model) if args.model else None
    report = build_report(real, syns, spec, holdout=holdout, seed=args.seed,
                          convergence=model and model.convergence_, responses=model and model.response_summary())
    decision = decide(report, release) if release is not None else None
    paths = write_report(args.out, report, decision)
    extras = ", ".join(f"{k} {v:.1f} s" for k, v in report["seconds"].items() if k != "total" and v)
    print(f"report of {len(syns)} synthetic file(s) in {time.monotonic() - started:.1f} s"
          f"{f' (of which {extras})' if extras else ''}:")
    for path in paths:
        print(f"  {path}")


def _split(args):
    if not 0 < args.fraction < 1:
        raise InputError("--fraction must be between 0 and 1 (the share of rows held out)")
    table = read_table(args.real)
    held = np.random.default_rng(args.seed).random(len(table)) < args.fraction
    for path in (args.train, args.holdout):
        _check_output(path)
    for path, part in ((args.train, table[~held]), (args.holdout, table[held])):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_table(part.reset_index(drop=True), path)
    print(f"split {len(table):,} rows: {int((~held).sum()):,} -> {args.train}, "
          f"{int(held.sum()):,} held out -> {args.holdout}")


def _check_output(path: Path):
    """InputError for an output name of no table format (nothing is created here)."""
    if path.suffix.lower() not in (".csv", ".parquet", ".pq", ".tsv", ".gz"):
        raise InputError(f"--out '{path.name}': use a .csv or .parquet file name")


if __name__ == "__main__":
    sys.exit(main())
