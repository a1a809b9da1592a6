"""Every bad input to every command: exit code 2, one line on stderr, and no store touched.

The commands run in-process through `app.cli.main` (the entry point `bench` runs, with its
one-line error handling), so 150 cases take seconds; `test_in_process_matches_a_subprocess`
checks on a few cases that a real `python -m bench` process answers byte for byte the same.
Around every case the test hashes each prepared store (the file and its -wal) and checks that
the working directory stays empty (no ./bench.db created behind the user's back).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from app import cli
from bench.cells import MAX_SEED, MAX_SEEDS

PW_URL = "postgresql+psycopg://u:hunter2@127.0.0.1"

GRID_FILES = {  # name -> content (bytes): each a grid file that must be refused
    "hw_int.yaml": b"methods: [sgd]\ntasks: [performative]\nhardware: 5\n",
    "hw_list_int.yaml": b"methods: [sgd]\ntasks: [performative]\nhardware: [5]\n",
    "hw_null.yaml": b"methods: [sgd]\ntasks: [performative]\nhardware: [null]\n",
    "hw_empty.yaml": b"methods: [sgd]\ntasks: [performative]\nhardware: []\n",
    "hw_tpu.yaml": b"methods: [sgd]\ntasks: [performative]\nhardware: [tpu]\n",
    "hw_map.yaml": b"methods: [sgd]\ntasks: [performative]\nhardware: {cpu: 1}\n",
    "hw_cuda_nogpu.yaml": b"methods: [no_erasure]\ntasks: [concept_erasure]\nhardware: [cuda]\n",
    "latin1.yaml": "methods: [sgd]\ntasks: [performative]  # café\n".encode("latin-1"),
    "binary.yaml": bytes(range(256)),
    "unclosed.yaml": b"methods: [sgd\ntasks: [performative]\n",
    "tabs.yaml": b"methods:\n\t- sgd\ntasks: [performative]\n",
    "bad_indent.yaml": b"methods:\n  - sgd\n tasks: [performative]\n",
    "scalar.yaml": b"just a string\n",
    "list.yaml": b"- sgd\n- performative\n",
    "empty.yaml": b"",
    "unknown_key.yaml": b"methods: [sgd]\ntasks: [performative]\nworkers: 4\n",
    "no_methods.yaml": b"tasks: [performative]\n",
    "methods_empty.yaml": b"methods: []\ntasks: [performative]\n",
    "method_int.yaml": b"methods: [{name: 5}]\ntasks: [performative]\n",
    "method_extra.yaml": b"methods: [{name: sgd, cfg: {T: 1}}]\ntasks: [performative]\n",
    "method_unknown.yaml": b"methods: [sgdd]\ntasks: [performative]\n",
    "config_inf.yaml": b"methods: [{name: pcsgd, config: {c: .inf}}]\ntasks: [performative]\n",
    "config_nan.yaml": b"methods: [{name: pcsgd, config: {c: .nan}}]\ntasks: [performative]\n",
    "config_neg_inf.yaml": b"methods: [sgd]\ntasks: [{name: performative, config: {beta: -.inf}}]\n",
    "config_type.yaml": b"methods: [{name: sgd, config: {T: fast}}]\ntasks: [performative]\n",
    "config_key.yaml": b"methods: [{name: sgd, config: {TT: 1}}]\ntasks: [performative]\n",
    "seeds_neg.yaml": b"methods: [sgd]\ntasks: [performative]\nseeds: -1\n",
    "seeds_huge.yaml": b"methods: [sgd]\ntasks: [performative]\nseeds: 0-99999999999\n",
    "seeds_2_31.yaml": f"methods: [sgd]\ntasks: [performative]\nseeds: {2**31}\n".encode(),
    "seeds_float.yaml": b"methods: [sgd]\ntasks: [performative]\nseeds: 1.5\n",
    "seeds_bool.yaml": b"methods: [sgd]\ntasks: [performative]\nseeds: true\n",
    "seeds_null.yaml": b"methods: [sgd]\ntasks: [performative]\nseeds: null\n",
    "seeds_empty.yaml": b"methods: [sgd]\ntasks: [performative]\nseeds: []\n",
    "seeds_list_neg.yaml": b"methods: [sgd]\ntasks: [performative]\nseeds: [0, -2]\n",
    "incompatible.yaml": b"methods: [sgd]\ntasks: [concept_erasure]\n",
    # numbers are ASCII decimal, a key is given once, integers are bounded, a grid is capped
    "dup_methods.yaml": b"methods: [sgd]\ntasks: [performative]\nmethods: [pcsgd]\n",
    "dup_seeds.yaml": b"methods: [sgd]\ntasks: [performative]\nseeds: 0\nseeds: 1\n",
    "dup_config_key.yaml": b"methods: [{name: sgd, config: {T: 1, T: 2}}]\ntasks: [performative]\n",
    "dup_task_config_key.yaml": b"methods: [sgd]\ntasks: [{name: performative, config: {beta: 0.1, beta: 0.2}}]\n",
    "config_hex.yaml": b"methods: [{name: sgd, config: {T: 0x10}}]\ntasks: [performative]\n",
    "config_octal.yaml": b"methods: [{name: sgd, config: {T: 0o17}}]\ntasks: [performative]\n",
    "config_underscore.yaml": b"methods: [{name: sgd, config: {T: 1_000}}]\ntasks: [performative]\n",
    "config_sexagesimal.yaml": b"methods: [{name: sgd, config: {T: '1:30'}}]\ntasks: [performative]\n",
    "config_arabic.yaml": "methods: [{name: sgd, config: {T: \u0663}}]\ntasks: [performative]\n".encode(),
    "config_huge_int.yaml": b"methods: [{name: sgd, config: {T: 1000000000000000000000000000000}}]\n"
                            b"tasks: [performative]\n",
    "config_int_2_31.yaml": f"methods: [{{name: sgd, config: {{T: {2**31}}}}}]\ntasks: [performative]\n".encode(),
    "task_config_huge_int.yaml": b"methods: [sgd]\ntasks: [{name: performative, config: {m: -99999999999}}]\n",
    "seeds_hex.yaml": b"methods: [sgd]\ntasks: [performative]\nseeds: 0x10\n",
    "seeds_arabic.yaml": "methods: [sgd]\ntasks: [performative]\nseeds: \u0663\n".encode(),
    "seeds_sexagesimal.yaml": b"methods: [sgd]\ntasks: [performative]\nseeds: 1:30\n",
    "seeds_underscore_range.yaml": b"methods: [sgd]\ntasks: [performative]\nseeds: 0-1_0\n",
    "over_cap.yaml": ("methods: [" + ", ".join(f"{{name: sgd, config: {{T: {t}}}}}" for t in range(1, 12))
                      + "]\ntasks: [performative]\nseeds: 0-9999\n").encode(),  # 110,000 distinct cells
}

SGD = ["run", "-m", "sgd", "-t", "performative"]
RUN = SGD + ["--set", "T=2000"]
PCSGD = ["run", "-m", "pcsgd", "-t", "performative", "--set", "T=2000"]
GRID = ["grid", "-m", "sgd", "-t", "performative", "--set", "T=2000"]
BAD_DBS = {  # an id -> a --db value that every store-opening command must refuse
    "empty": "",
    "blank": "  ",
    "garbage": "garbage://x",
    "unsupported": "mysql://u@127.0.0.1/db",
    "dir": "sqlite:///{dir}",
    "text": "sqlite:///{text}",
    "corrupt": "sqlite:///{corrupt}",
    "corrupt_index": "sqlite:///{corrupt_index}",
    "newer": "sqlite:///{newer}",
    "foreign": "sqlite:///{foreign}",
    "port_word": PW_URL + ":abc/db",
    "port_range": PW_URL + ":99999/db",
    "no_folder": "sqlite:///{tmp}/no/such/folder/x.db",
    "unparsable": "::not a url::",
}
READ_DBS = {**BAD_DBS, "missing": "sqlite:///{tmp}/missing.db"}  # status, show, ... never create a store
WRITE_DBS = {**BAD_DBS, "readonly": "sqlite:///{readonly}"}  # run, grid, reproduce refuse before computing


def _cases():
    cases = [
        # run: config values, seeds, limits, hardware, names, flags
        ("run-c-inf", PCSGD + ["--set", "c=inf"], "finite"),
        ("run-c-nan", PCSGD + ["--set", "c=nan"], "finite"),
        ("run-c-neg-inf", PCSGD + ["--set", "c=-inf"], "finite"),
        ("run-c-1e999", PCSGD + ["--set", "c=1e999"], "finite"),
        ("run-c-Infinity", PCSGD + ["--set", "c=Infinity"], "finite"),
        ("run-c-huge-int", PCSGD + ["--set", "c=1" + "0" * 400], "an integer of 401 digits"),
        ("run-task-beta-inf", PCSGD + ["--set", "task.beta=inf"], "finite"),
        ("run-task-beta-nan", PCSGD + ["--set", "task.beta=NaN"], "finite"),
        ("run-seed-neg", RUN + ["--seed", "-1"], "bad seed -1"),
        ("run-seed-2-31", RUN + ["--seed", str(2**31)], "bad seed"),
        ("run-seed-huge", RUN + ["--seed", "99999999999999999999"], "bad seed"),
        ("run-seed-word", RUN + ["--seed", "abc"], "'abc' is not a valid int"),
        ("run-seeds-huge", RUN + ["--seeds", "99999999999999999999"], "bad seeds"),
        ("run-seeds-range-huge", RUN + ["--seeds", "0-99999999999"], "bad seeds"),
        ("run-seeds-over-cap", RUN + ["--seeds", f"0-{MAX_SEEDS}"], f"at most {MAX_SEEDS}"),
        ("run-seeds-list-over-cap", RUN + ["--seeds", f"0-{MAX_SEEDS - 1},{MAX_SEEDS + 5}"], f"at most {MAX_SEEDS}"),
        ("run-seeds-max-plus-one", RUN + ["--seeds", f"{MAX_SEED}-{MAX_SEED + 1}"], "bad seeds"),
        ("run-seeds-neg", RUN + ["--seeds", "-3"], "bad seeds"),
        ("run-seeds-open", RUN + ["--seeds", "3-"], "bad seeds"),
        ("run-seeds-reversed", RUN + ["--seeds", "9-1"], "bad seeds"),
        ("run-seeds-empty", RUN + ["--seeds", ""], "bad seeds"),
        ("run-seeds-word", RUN + ["--seeds", "a,b"], "bad seeds"),
        ("run-seeds-trailing-comma", RUN + ["--seeds", "1,"], "bad seeds"),
        ("run-seed-and-seeds", RUN + ["--seed", "1", "--seeds", "2"], "not both"),
        ("run-timeout-inf", RUN + ["--timeout", "inf"], "--timeout inf"),
        ("run-timeout-nan", RUN + ["--timeout", "nan"], "--timeout nan"),
        ("run-timeout-neg", RUN + ["--timeout", "-1"], "--timeout -1"),
        ("run-timeout-zero", RUN + ["--timeout", "0"], "--timeout 0"),
        ("run-timeout-neg-inf", RUN + ["--timeout", "-inf"], "--timeout -inf"),
        ("run-timeout-word", RUN + ["--timeout", "soon"], "'soon' is not a valid float"),
        ("run-workers-zero", RUN + ["--workers", "0"], "--workers 0"),
        ("run-workers-neg", RUN + ["--workers", "-2"], "--workers -2"),
        ("run-workers-huge", RUN + ["--workers", "100000"], "--workers 100000"),
        ("run-hardware-cuda", RUN + ["--hardware", "cuda"], "runs on cpu, not cuda"),
        ("run-hardware-tpu", RUN + ["--hardware", "tpu"], "not tpu"),
        ("run-hardware-cuda-nogpu", ["run", "-m", "no_erasure", "-t", "concept_erasure", "--hardware", "cuda"],
         "no CUDA GPU is visible"),
        ("run-hardware-colon", ["run", "-m", "no_erasure", "-t", "concept_erasure", "--hardware", "cuda:"],
         "hardware 'cuda:'"),
        ("run-unknown-method", ["run", "-m", "sgdd", "-t", "performative"], "unknown method 'sgdd'"),
        ("run-unknown-task", ["run", "-m", "sgd", "-t", "perf"], "unknown task 'perf'"),
        ("run-incompatible", ["run", "-m", "sgd", "-t", "concept_erasure"], "incompatible pair"),
        ("run-wrong-problem-type", ["run", "-m", "sft", "-t", "preference_bandit"],
         "incompatible pair: sft takes PreferenceProblem problems, preference_bandit builds BanditPreferenceProblem"),
        ("run-unknown-key", RUN + ["--set", "cc=1"], "unknown config key 'cc'"),
        ("run-task-unknown-key", RUN + ["--set", "task.dim=20"], "unknown config key 'dim'"),
        ("run-wrong-type", SGD + ["--set", "T=fast"], "expected int"),
        ("run-float-for-int", SGD + ["--set", "T=1.5"], "expected int"),
        # numbers: ASCII decimal only (int() and YAML also read these), integers within bounds
        ("run-set-arabic-digit", SGD + ["--set", "T=\u0663"], "expected int, got '\u0663'"),
        ("run-set-fullwidth-digit", SGD + ["--set", "T=\uff13"], "expected int"),
        ("run-set-float-arabic", ["run", "-m", "pcsgd", "-t", "performative", "--set", "c=\u0660.\u0665"],
         "expected float"),
        ("run-set-hex", SGD + ["--set", "T=0x10"], "expected int, got '0x10'"),
        ("run-set-octal", SGD + ["--set", "T=0o17"], "expected int"),
        ("run-set-binary", SGD + ["--set", "T=0b101"], "expected int"),
        ("run-set-underscore", SGD + ["--set", "T=1_000"], "expected int, got '1_000'"),
        ("run-set-sexagesimal", SGD + ["--set", "T=1:30"], "expected int"),
        ("run-set-power", SGD + ["--set", "T=10**30"], "expected int"),
        ("run-set-list-hex", ["run", "-m", "sgd", "-t", "performative", "--set", "task.beta=[0x10]"], "expected"),
        ("run-set-huge-int", SGD + ["--set", "T=1" + "0" * 30], "out of bounds"),
        ("run-set-int-2-31", SGD + ["--set", f"T={2**31}"], f"T={2**31}: out of bounds"),
        ("run-set-neg-huge-int", SGD + ["--set", f"T=-{2**40}"], "out of bounds"),
        ("run-task-huge-int", SGD + ["--set", f"task.m={10**12}"], "performative.m="),
        ("run-task-world-seed-huge", SGD + ["--set", f"task.world_seed={2**63}"], "out of bounds"),
        ("run-seed-arabic", RUN + ["--seed", "\u0663"], "is not a valid integer"),
        ("run-seed-underscore", RUN + ["--seed", "1_0"], "is not a valid integer"),
        ("run-seeds-arabic", RUN + ["--seeds", "\u0663"], "bad seeds"),
        ("run-seeds-underscore", RUN + ["--seeds", "1_0"], "bad seeds"),
        ("run-seeds-range-arabic", RUN + ["--seeds", "0-\u0663"], "bad seeds"),
        ("run-seeds-hex", RUN + ["--seeds", "0x10"], "bad seeds"),
        ("run-seeds-plus", RUN + ["--seeds", "+3"], "bad seeds"),
        ("run-workers-arabic", RUN + ["--workers", "\u0662"], "is not a valid integer"),
        ("run-timeout-arabic", RUN + ["--timeout", "\u0663"], "is not a valid float"),
        ("run-timeout-underscore", RUN + ["--timeout", "1_0"], "is not a valid float"),
        ("run-store-retry-arabic", RUN + ["--store-retry", "\u0663"], "is not a valid float"),
        # a key given twice
        ("run-set-twice", SGD + ["--set", "T=1", "--set", "T=2"], "--set T is given twice ('1' and '2')"),
        ("run-set-twice-same", SGD + ["--set", "T=1", "--set", "T=1"], "--set T is given twice"),
        ("run-set-twice-prefixed", SGD + ["--set", "T=1", "--set", "method.T=2"], "--set method.T is given twice"),
        ("run-task-set-twice", SGD + ["--set", "task.beta=0.1", "--set", "task.beta=0.2"],
         "--set task.beta is given twice"),
        # secrets in URLs: masked in every message
        ("run-db-query-password", RUN + ["--db", "postgresql+psycopg://u@127.0.0.1:1/x?password=SECRET"],
         "password=***"),
        ("run-db-userinfo-password", RUN + ["--db", "postgresql+psycopg://u:SECRET@127.0.0.1:1/x"], "u:***@"),
        ("run-set-no-equals", RUN + ["--set", "T"], "bad override"),
        ("run-set-no-key", RUN + ["--set", "=1"], "bad override"),
        ("run-missing-task", ["run", "-m", "sgd"], "Missing option '--task'"),
        ("run-unknown-option", RUN + ["--sed", "1"], "No such option: --sed"),
        *[(f"run-db-{k}", RUN + ["--db", v], None) for k, v in WRITE_DBS.items()],
        # grid: flags, files, limits, hardware
        ("grid-seeds-range-huge", GRID + ["--seeds", "0-99999999999"], "bad seeds"),
        ("grid-seeds-neg", GRID + ["--seeds", "-1"], "bad seeds"),
        ("grid-seeds-2-31", GRID + ["--seeds", str(2**31)], "bad seeds"),
        ("grid-seeds-over-cap", GRID + ["--seeds", f"5-{MAX_SEEDS + 5}"], f"at most {MAX_SEEDS}"),
        ("grid-c-inf", ["grid", "-m", "pcsgd", "-t", "performative", "--set", "c=inf"], "finite"),
        ("grid-timeout-inf", GRID + ["--timeout", "inf"], "--timeout inf"),
        ("grid-timeout-nan", GRID + ["--timeout", "nan"], "--timeout nan"),
        ("grid-timeout-zero", GRID + ["--timeout", "0"], "--timeout 0"),
        ("grid-timeout-neg", GRID + ["--timeout", "-5"], "--timeout -5"),
        ("grid-workers-zero", GRID + ["--workers", "0"], "--workers 0"),
        ("grid-runner-slurm", GRID + ["--runner", "slurm"], "unknown runner 'slurm'"),
        ("grid-address-without-ray", GRID + ["--address", "auto"], "--address is for --runner ray"),
        ("grid-hardware-cuda-nogpu", ["grid", "-m", "no_erasure", "-t", "concept_erasure", "--hardware", "cuda"],
         "no CUDA GPU is visible"),
        ("grid-hardware-cuda-class-nogpu", ["grid", "-m", "no_erasure", "-t", "concept_erasure", "--hardware",
                                            "cuda:a100"],
         "no CUDA GPU is visible"),
        ("grid-hardware-tpu", GRID + ["--hardware", "tpu"], "hardware 'tpu'"),
        ("grid-hardware-colon", GRID + ["--hardware", "cuda:"], "hardware 'cuda:'"),
        ("grid-hardware-only-incompatible", GRID + ["--hardware", "cuda"], "no compatible"),
        ("grid-set-twice", GRID + ["--set", "T=2000"], "--set T is given twice"),
        ("grid-max-cells", GRID + ["--seeds", "0-9", "--max-cells", "5"], "10 cells"),
        ("grid-max-cells-zero", GRID + ["--max-cells", "0"], "--max-cells 0"),
        ("grid-max-cells-word", GRID + ["--max-cells", "many"], "is not a valid integer"),
        ("grid-max-cells-arabic", GRID + ["--max-cells", "\u0665"], "is not a valid integer"),
        ("grid-file-over-default-cap", ["grid", "-f", "{grid}/over_cap.yaml"], "110,000 cells"),
        ("grid-file-over-cap-raised", ["grid", "-f", "{grid}/over_cap.yaml", "--max-cells", "1000"],
         "more than the cap of 1,000"),
        ("grid-store-retry-underscore", GRID + ["--store-retry", "1_0"], "is not a valid float"),
        ("grid-db-query-token", GRID + ["--db", "postgresql+psycopg://u@127.0.0.1:1/x?sslpassword=SECRET&token=SECRET"],
         "token=***"),
        ("grid-no-method", ["grid", "-t", "performative"], "at least one --method"),
        ("grid-unknown-method", ["grid", "-m", "sgdd", "-t", "performative"], "unknown method 'sgdd'"),
        ("grid-file-and-flags", ["grid", "-f", "{grid}/hw_tpu.yaml", "-m", "sgd"], "not both"),
        ("grid-file-missing", ["grid", "-f", "{tmp}/no-such-grid.yaml"], "cannot read grid file"),
        ("grid-file-dir", ["grid", "-f", "{dir}"], "cannot read grid file"),
        ("grid-file-seeds-override", ["grid", "-f", "{grid}/incompatible.yaml", "--seeds", "-1"], "bad seeds"),
        ("grid-file-hardware-override", ["grid", "-f", "{grid}/hw_cuda_nogpu.yaml", "--hardware", "gpu"],
         "hardware 'gpu'"),
        *[(f"grid-file-{name[:-5]}", ["grid", "-f", f"{{grid}}/{name}"], None) for name in GRID_FILES],
        *[(f"grid-db-{k}", GRID + ["--db", v], None) for k, v in WRITE_DBS.items()],
        # status, show, export, claims: read-only commands
        *[(f"status-db-{k}", ["status", "--db", v], None) for k, v in READ_DBS.items()],
        ("status-extra-arg", ["status", "now"], "Got unexpected extra argument"),
        *[(f"show-db-{k}", ["show", "--db", v], None) for k, v in READ_DBS.items()],
        ("show-unknown-task", ["show", "--task", "perf"], "unknown task 'perf'"),
        ("show-empty-task", ["show", "--task", ""], "unknown task ''"),
        ("export-missing-folder", ["export", "-o", "{tmp}/no/such/folder/board.csv"], "does not exist"),
        ("export-directory", ["export", "-o", "{dir}"], "is a directory"),
        ("export-unwritable", ["export", "-o", "/proc/board.csv"], "cannot write /proc/board.csv"),
        ("export-empty", ["export", "-o", ""], "is a directory"),
        ("export-format", ["export", "--format", "xml"], "'xml' is not one of"),
        ("export-unknown-task", ["export", "--task", "perf"], "unknown task 'perf'"),
        *[(f"export-db-{k}", ["export", "--db", v], None) for k, v in READ_DBS.items()],
        ("claims-paper-empty", ["claims", "--paper", ""], "--paper is empty"),
        ("claims-paper-blank", ["claims", "--paper", "  "], "--paper is empty"),
        ("claims-paper-unknown", ["claims", "--paper", "clipped-sgd"], "unknown paper 'clipped-sgd'"),
        *[(f"claims-db-{k}", ["claims", "--db", v], None) for k, v in READ_DBS.items()],
        # reproduce
        ("reproduce-seeds-neg", ["reproduce", "clipped-sgd-performative", "--seeds", "-3"], "--seeds -3"),
        ("reproduce-seeds-zero", ["reproduce", "clipped-sgd-performative", "--seeds", "0"], "--seeds 0"),
        ("reproduce-seeds-over-cap", ["reproduce", "clipped-sgd-performative", "--seeds", str(MAX_SEEDS + 1)],
         "--seeds"),
        ("reproduce-seeds-word", ["reproduce", "clipped-sgd-performative", "--seeds", "x"], "'x' is not a valid int"),
        ("reproduce-seeds-arabic-indic", ["reproduce", "clipped-sgd-performative", "--seeds", "٣"],
         "give ASCII digits"),
        ("reproduce-numerics-unknown", ["reproduce", "clipped-sgd-performative", "--numerics", "avx"],
         "'avx' is not one of"),
        ("reproduce-timeout-inf", ["reproduce", "clipped-sgd-performative", "--timeout", "inf"], "--timeout inf"),
        ("reproduce-timeout-zero", ["reproduce", "clipped-sgd-performative", "--timeout", "0"], "--timeout 0"),
        ("reproduce-workers-zero", ["reproduce", "clipped-sgd-performative", "--workers", "0"], "--workers 0"),
        ("reproduce-runner", ["reproduce", "clipped-sgd-performative", "--runner", "k8s"], "unknown runner 'k8s'"),
        ("reproduce-address-without-ray", ["reproduce", "clipped-sgd-performative", "--address", "auto"],
         "--address is for"),
        ("reproduce-unknown-paper", ["reproduce", "clipped-sgd"], "unknown paper 'clipped-sgd'"),
        ("reproduce-missing-paper", ["reproduce"], "give one paper slug or --all"),
        ("reproduce-paper-and-all", ["reproduce", "clipped-sgd-performative", "--all"], "give one paper slug or --all"),
        ("reproduce-bad-scale", ["reproduce", "--all", "--scale", "gpu"], "gpu"),
        *[(f"reproduce-db-{k}", ["reproduce", "clipped-sgd-performative", "--seeds", "1", "--db", v], None)
          for k, v in WRITE_DBS.items()],
        # leaderboard (never reaches streamlit: the test makes exec fail loudly)
        ("leaderboard-port-huge", ["leaderboard", "--port", "99999"], "--port 99999"),
        ("leaderboard-port-zero", ["leaderboard", "--port", "0"], "--port 0"),
        ("leaderboard-port-neg", ["leaderboard", "--port", "-1"], "--port -1"),
        ("leaderboard-port-word", ["leaderboard", "--port", "http"], "'http' is not a valid int"),
        ("leaderboard-address-empty", ["leaderboard", "--address", ""], "--address is empty"),
        ("leaderboard-address-999", ["leaderboard", "--address", "999.1.1.1"], "'999.1.1.1' is not an address"),
        ("leaderboard-address-bad-v6", ["leaderboard", "--address", "::1x"], "'::1x' is not an address"),
        ("leaderboard-address-foreign", ["leaderboard", "--address", "8.8.8.8"], "cannot listen there"),
        ("leaderboard-address-unknown-host", ["leaderboard", "--address", "no-such-host.invalid"],
         "is not an address or a host name that resolves"),
        ("leaderboard-address-port-in-url", ["leaderboard", "--address", "127.0.0.1:8501"], "--address"),
        ("leaderboard-port-arabic", ["leaderboard", "--port", "\u0668\u0665\u0660\u0661"], "is not a valid integer"),
        ("leaderboard-db-query-password", ["leaderboard", "--db", "postgresql+psycopg://u@127.0.0.1:1/x?password=SECRET"],
         "password=***"),
        *[(f"leaderboard-db-{k}", ["leaderboard", "--db", v], None) for k, v in READ_DBS.items()],
        # submit and jobs (no cluster: refused before, or unreachable)
        ("submit-nothing", ["submit", "--db", "postgresql+psycopg://u@db/bench", "--"], "nothing to submit"),
        ("submit-relative-sqlite", ["submit", "--db", "sqlite:///bench.db", "--", "list", "methods"],
         "needs a shared database"),
        ("submit-default-db", ["submit", "--address", "http://127.0.0.1:1", "--", "list", "methods"],
         "cannot reach the Ray job API"),
        ("submit-db-empty", ["submit", "--db", "", "--", "list", "methods"], "--db is empty"),
        ("submit-db-bad-port", ["submit", "--db", PW_URL + ":abc/db", "--", "list", "methods"], "bad database URL"),
        ("submit-db-unparsable", ["submit", "--db", "::x::", "--", "list", "methods"], "bad database URL"),
        ("submit-password-in-args", ["submit", "--db", "postgresql+psycopg://u@db/bench", "--", "grid", "--db",
                                     PW_URL + "/b"],
         "a password in the job's arguments"),
        ("submit-address-scheme", ["submit", "--address", "ftp://head", "--db", "postgresql+psycopg://u@db/b", "--",
                                   "list", "methods"], "use the head's dashboard URL"),
        ("submit-unreachable", ["submit", "--address", "http://127.0.0.1:1", "--db", "postgresql+psycopg://u@db/b",
                                "--", "list", "methods"], "cannot reach the Ray job API"),
        ("jobs-address-scheme", ["jobs", "--address", "head:8265"], "use the head's dashboard URL"),
        ("submit-address-password", ["submit", "--address", "http://user:SECRET@127.0.0.1:1", "--db",
                                     "postgresql+psycopg://u@db/b", "--", "list", "methods"],
         "cannot reach the Ray job API at http://user:***@127.0.0.1:1"),
        ("submit-address-token-param", ["submit", "--address", "http://127.0.0.1:1/?token=SECRET", "--db",
                                        "postgresql+psycopg://u@db/b", "--", "list", "methods"], "token=***"),
        ("submit-db-query-password", ["submit", "--db", "sqlite:///rel.db?password=SECRET", "--", "list", "methods"],
         "password=***"),
        ("jobs-address-password", ["jobs", "--address", "http://user:SECRET@127.0.0.1:1"], "http://user:***@"),
        ("jobs-address-password-scheme", ["jobs", "--address", "user:SECRET@head:8265"], "use the head's dashboard"),
        ("jobs-one-address-password", ["jobs", "raysubmit_x", "--address", "http://u:SECRET@127.0.0.1:1"],
         "http://u:***@127.0.0.1:1"),
        ("status-db-query-password", ["status", "--db", "postgresql+psycopg://u@127.0.0.1:1/x?password=SECRET"],
         "password=***"),
        ("status-db-api-key", ["status", "--db", "postgresql+psycopg://u@127.0.0.1:1/x?api_key=SECRET"],
         "api_key=***"),
        ("jobs-unreachable", ["jobs", "--address", "http://127.0.0.1:1"], "cannot reach the Ray job API"),
        ("jobs-one-unreachable", ["jobs", "raysubmit_x", "--address", "http://127.0.0.1:1"],
         "cannot reach the Ray job API"),
        # db upgrade
        *[(f"db-upgrade-{k}", ["db", "upgrade", "--db", v], None) for k, v in BAD_DBS.items()],
        ("db-unknown", ["db", "downgrade-everything"], "No such command"),
        ("db-upgrade-query-password", ["db", "upgrade", "--db", "postgresql+psycopg://u@127.0.0.1:1/x?password=SECRET"],
         "password=***"),
        ("db-upgrade-userinfo-password", ["db", "upgrade", "--db", "postgresql+psycopg://u:SECRET@127.0.0.1:1/x"],
         "u:***@"),
        # list and the command itself
        ("list-unknown", ["list", "solvers"], "'solvers' is not one of"),
        ("list-missing", ["list"], "Missing argument"),
        ("unknown-command", ["frobnicate"], "No such command 'frobnicate'"),
        ("unknown-global-option", ["--verbose", "list", "methods"], "No such option"),
    ]
    return cases


CASES = _cases()
ENV_CASES = [  # BENCH_DB_URL itself bad: the same refusals
    ("env-empty-status", "", ["status"], "BENCH_DB_URL is empty"),
    ("env-empty-run", "", RUN, "BENCH_DB_URL is empty"),
    ("env-garbage-grid", "garbage://x", GRID, "not supported"),
    ("env-dir-show", "sqlite:///{dir}", ["show"], "is a directory"),
    ("env-query-password-status", "postgresql+psycopg://u@127.0.0.1:1/x?password=SECRET", ["status"], "password=***"),
]


def _corrupt(source: Path, target: Path, table: str) -> None:
    """A copy of the store with a valid header and one page of `table` overwritten."""
    shutil.copy(source, target)
    with sqlite3.connect(target) as connection:
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        root = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    connection.close()
    with target.open("r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(b"\xa5" * page_size)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The good store (one done run) and every bad file the cases point at."""
    from bench.cells import Entry, expand
    from bench.registry import Registry
    from bench.store import Store
    from runners.local import run_cells

    root = tmp_path_factory.mktemp("bad")
    store_path = root / "store.db"
    registry = Registry.discover()
    store = Store.open(f"sqlite:///{store_path}")
    run_cells(expand(registry, [Entry("sgd", {"T": 2000})], [Entry("performative")], [0], ["cpu"]).cells, store,
              registry)
    store.engine.dispose()
    paths = {"store": store_path, "tmp": root, "dir": root / "a-folder", "grid": root / "grids"}
    paths["dir"].mkdir()
    paths["grid"].mkdir()
    for name, content in GRID_FILES.items():
        (paths["grid"] / name).write_bytes(content)
    paths["text"] = root / "notes.txt"
    paths["text"].write_text("not a database\n")
    paths["corrupt"] = root / "corrupt.db"
    _corrupt(store_path, paths["corrupt"], "runs")
    paths["corrupt_index"] = root / "corrupt-index.db"
    _corrupt(store_path, paths["corrupt_index"], "ix_curves_run_key_name")
    paths["newer"] = root / "newer.db"
    shutil.copy(store_path, paths["newer"])
    with sqlite3.connect(paths["newer"]) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    connection.close()
    paths["foreign"] = root / "foreign.db"
    with sqlite3.connect(paths["foreign"]) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    connection.close()
    paths["readonly"] = root / "readonly.db"
    shutil.copy(store_path, paths["readonly"])
    paths["readonly"].chmod(0o444)
    return paths


def _fingerprint(files) -> dict[str, str]:
    """sha256 of every prepared file, with its -wal (a missing -wal and an empty one are the same)."""
    out = {}
    for path in sorted(p for p in files["tmp"].rglob("*") if p.is_file() and not p.name.endswith(("-wal", "-shm"))):
        wal = path.with_name(path.name + "-wal")
        out[str(path)] = hashlib.sha256(path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")).hexdigest()
    return out


def _fill(args, files) -> list[str]:
    return [a.format(**{k: str(v) for k, v in files.items()}) for a in args]


def _invoke(argv, monkeypatch, capsys, cwd) -> tuple[int, str, str]:
    """`bench <argv>` through the real entry point, in this process."""
    def no_exec(*_args, **_kwargs):
        raise AssertionError("a bad input reached exec (streamlit would have started)")

    monkeypatch.setattr(os, "execv", no_exec)
    monkeypatch.setattr(os, "execve", no_exec)
    monkeypatch.setattr(sys, "argv", ["bench", *argv])
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    with pytest.raises(SystemExit) as ended:
        cli.main()
    captured = capsys.readouterr()
    return ended.value.code, captured.out, captured.err


@pytest.fixture
def bench_env(monkeypatch, files):
    monkeypatch.setenv("BENCH_DB_URL", f"sqlite:///{files['store']}")
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("RAY_API_SERVER_ADDRESS", "BENCH_DB_PASSWORD_FILE", "RAY_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("bench.execute.device_for", _no_gpu_device_for)
    return monkeypatch


def _no_gpu_device_for(hardware: str) -> str:
    """This suite's cuda cases need a machine without a GPU; on a GPU machine, pretend none is visible."""
    from bench.errors import BenchError

    if hardware == "cpu":
        return "cpu"
    raise BenchError(f"hardware {hardware!r} requested but no CUDA GPU is visible on this machine (allowed here: cpu)")


def _check(code, out, err, expected, before, after, cwd):
    lines = err.splitlines()
    assert code == 2, (code, out[-2000:], err[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    if expected is not None:
        assert expected in lines[0], lines[0]
    assert "SECRET" not in out + err and "hunter2" not in out + err  # no secret of a URL is ever printed
    assert after == before  # every store byte for byte as it was
    assert not any(cwd.iterdir()), list(cwd.iterdir())  # no ./bench.db behind the user's back


@pytest.mark.parametrize("args,expected", [(a, e) for _, a, e in CASES], ids=[i for i, _, _ in CASES])
def test_bad_input_is_one_line_exit_2_and_touches_no_store(args, expected, files, bench_env, capsys, tmp_path):
    before = _fingerprint(files)
    code, out, err = _invoke(_fill(args, files), bench_env, capsys, tmp_path)
    _check(code, out, err, expected, before, _fingerprint(files), tmp_path)


@pytest.mark.parametrize("url,args,expected", [(u, a, e) for _, u, a, e in ENV_CASES], ids=[i for i, *_ in ENV_CASES])
def test_bad_bench_db_url_is_refused_like_a_bad_flag(url, args, expected, files, bench_env, capsys, tmp_path):
    bench_env.setenv("BENCH_DB_URL", _fill([url], files)[0])
    before = _fingerprint(files)
    code, out, err = _invoke(list(args), bench_env, capsys, tmp_path)
    _check(code, out, err, expected, before, _fingerprint(files), tmp_path)


def test_the_suite_covers_every_command_with_at_least_120_inputs():
    commands = {args[0] if args[0] != "db" else "db upgrade" for _, args, _ in CASES if not args[0].startswith("-")}
    assert len(CASES) + len(ENV_CASES) >= 220
    assert {"run", "grid", "status", "show", "export", "claims", "reproduce", "leaderboard", "submit", "jobs",
            "db upgrade", "list"} <= commands
    assert len({i for i, _, _ in CASES}) == len(CASES)  # unique ids


def test_messages_name_the_problem(files, bench_env, capsys, tmp_path):
    """The store-level refusals say what is wrong, not just that something is."""
    expected = {"corrupt": "corrupt SQLite database", "corrupt_index": "corrupt SQLite database",
                "newer": "newer than (or unknown to) this code's", "readonly": "is read-only",
                "dir": "is a directory", "text": "is not a SQLite database", "foreign": "not a bench database",
                "garbage": "'garbage' in 'garbage://x' is not supported", "port_word": "bad database URL",
                "port_range": "port 99999 is not in 1-65535", "empty": "--db is empty"}
    for key, message in expected.items():
        code, out, err = _invoke(_fill(RUN + ["--db", WRITE_DBS[key]], files), bench_env, capsys, tmp_path)
        assert code == 2 and message in err, (key, err)
        assert "hunter2" not in err  # the password of a malformed URL is masked too
    code, _, err = _invoke(_fill(["db", "upgrade", "--db", BAD_DBS["corrupt"]], files), bench_env, capsys, tmp_path)
    assert code == 2 and "corrupt SQLite database" in err  # no "schema at ..." success line


def test_in_process_matches_a_subprocess(files, bench_env, capsys, tmp_path):
    """The in-process calls answer as the installed `bench` does: same exit code, same single line."""
    picked = [case for case in CASES if case[0] in ("run-c-inf", "grid-file-hw_null", "export-directory",
                                                    "status-db-corrupt", "leaderboard-port-huge", "unknown-command")]
    env = {**os.environ, "BENCH_DB_URL": f"sqlite:///{files['store']}", "COLUMNS": "200"}
    for _, args, _ in picked:
        argv = _fill(args, files)
        proc = subprocess.run([sys.executable, "-m", "bench", *argv], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=120)
        code, _, err = _invoke(argv, bench_env, capsys, tmp_path)
        program = re.compile(r"\(see `[^`]*`\)")  # click names the program after sys.argv[0]: pytest here
        assert (proc.returncode, program.sub("(see)", proc.stderr)) == (code, program.sub("(see)", err)), argv


def test_a_config_field_may_state_its_own_bounds_and_every_integer_has_the_default_cap():
    """`field(metadata={"max": ...})` bounds an integer field (each element of a tuple of them); without one, an
    integer is within +-(2**31 - 1). Out of bounds is refused naming the field and the bounds."""
    from dataclasses import dataclass, field

    from bench.configs import INT_LIMIT, build_config
    from bench.errors import BenchError

    @dataclass(frozen=True)
    class Config:
        steps: int = field(default=10, metadata={"max": 1000, "min": 1})
        widths: tuple[int, ...] = field(default=(8,), metadata={"max": 64})
        other: int = 0

    assert build_config(Config, {"steps": 1000, "widths": [64, 1], "other": -INT_LIMIT}, "toy").steps == 1000
    for values, message in (({"steps": 1001}, "toy.steps=1001: out of bounds; give an integer in 1..1000"),
                            ({"steps": 0}, "toy.steps=0: out of bounds; give an integer in 1..1000"),
                            ({"widths": [8, 65]}, "toy.widths=65: out of bounds"),
                            ({"other": INT_LIMIT + 1}, f"toy.other={INT_LIMIT + 1}: out of bounds; give an integer in "
                                                       f"{-INT_LIMIT}..{INT_LIMIT}")):
        with pytest.raises(BenchError, match=re.escape(message)):
            build_config(Config, values, "toy")


def test_duplicates_are_removed_before_any_cell_is_built_and_the_cap_counts_distinct_cells(monkeypatch):
    """One method listed 20,000 times over 10 seeds builds 10 cells (not 200,000), and counts as 10 against the cap;
    two spellings of one config are one."""
    import bench.cells as cells_module
    from bench.cells import Entry, expand
    from bench.errors import BenchError
    from bench.registry import Registry

    built = []
    real = cells_module.Cell

    def counting(*args, **kwargs):
        built.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(cells_module, "Cell", counting)
    registry = Registry.discover()
    default_t = registry.method("sgd").Config().T
    methods = [Entry("sgd", {"T": 5})] * 20_000 + [Entry("sgd", {}), Entry("sgd", {"T": default_t})]
    grid = expand(registry, methods, [Entry("performative")], list(range(10)), ["cpu"], max_cells=20)
    assert len(grid.cells) == 20 and len(built) == 20 and len(set(grid.cells)) == 20
    with pytest.raises(BenchError, match="the grid has 20 cells .* more than the cap of 19"):
        expand(registry, methods, [Entry("performative")], list(range(10)), ["cpu"], max_cells=19)
    assert len(built) == 20  # refused before any cell was built
