#!/usr/bin/python3
"""The bad-input sweep: a few hundred wrong inputs across every way pipesim takes input
(config files through every subcommand that reads one, --set, flags, properties files,
expectation files, sweep grids and directories, decide case lines, --out targets), each
checked for the manners the README promises:

  - exit code 2, nothing on stdout, a message on stderr that starts with "pipesim";
  - the message names what is wrong and where (each case lists the words it must contain:
    the file, the key, the flag or the line);
  - no crash: no signal, no "terminate called", no sanitizer or assertion report;
  - nothing written: no result file, no temporary file left beside it.

The README's "Bad input" table holds the exact messages of the common cases (tests/cli_test.sh
checks those word for word); this sweep holds the long tail.

usage (ctest bad_input_sweep): PIPESIM=<binary> /usr/bin/python3 tests/bad_input_sweep.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

PIPESIM = os.environ.get("PIPESIM") or sys.exit("set PIPESIM to the pipesim binary")
TMP = tempfile.mkdtemp(prefix="pipesim_bad_input.")
OUT_DIR = os.path.join(TMP, "out")  # the only place a command may write: must stay empty
CRASH_WORDS = ("terminate called", "Assertion", "AddressSanitizer", "UndefinedBehaviorSanitizer",
               "runtime error:", "Segmentation", "core dumped", "std::", "what():")

cases = []  # (label, argv, [words the message must contain])


def write(name, content):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def case(label, argv, *words):
    cases.append((label, argv, list(words)))


GOOD = write("good.json", '{"run": {"duration": "10m", "drain": "1m", "seeds": 1}}')
EXPECT = write("expect.json", '{"expect": [{"metric": "lost_records_per_day", "max": 0}]}')
GRID = write("grid.json", '{"connect.max.poll.records": [100, 200]}')
OUT = os.path.join(OUT_DIR, "result.json")

# Every subcommand that reads a config, with what it needs besides the config.
READERS = [
    ("validate", lambda c: ["validate", c]),
    ("run", lambda c: ["run", c, "--out", OUT]),
    ("compare A", lambda c: ["compare", c, GOOD]),
    ("compare B", lambda c: ["compare", GOOD, c]),
    ("check", lambda c: ["check", c, "--expect", EXPECT]),
    ("lint", lambda c: ["lint", c]),
    ("explain", lambda c: ["explain", c, "--seed", "1"]),
    ("trace", lambda c: ["trace", c, "--seed", "1", "--out", OUT]),
    ("sweep", lambda c: ["sweep", c, "--grid", GRID, "--out", os.path.join(OUT_DIR, "sweep")]),
]

# ---------------------------------------------------------------------------------------------
# Config files: (content, words beside the file's name). Each goes through validate and
# through one other reader in turn, so that every reader meets every kind of mistake.
CONFIGS = [
    ("", "malformed JSON"),
    ("   \n\t\n", "malformed JSON"),
    ("{", "malformed JSON"),
    ("}", "malformed JSON"),
    ("null", "expected an object"),
    ("42", "expected an object"),
    ('"run"', "expected an object"),
    ("[1, 2]", "expected an object"),
    ('{"run": ', "malformed JSON"),
    ('{"run": {"seeds": 4,}}', "malformed JSON"),
    ('{"run": {"seeds": 1e400}}', "number overflow"),
    ("[" * 200 + "]" * 200, "nested deeper"),
    ('{"run": {}}\x00', "malformed JSON"),
    (b'{"connector": {"name": "\xff\xfe"}}', "UTF-8"),
    ('{"run": {"seeds": 2, "seeds": 3}}', "duplicate key"),
    ('{"conect": {}}', "conect"),
    ('{"run": 5}', "run"),
    ('{"run": null}', "run"),
    ('{"run": []}', "run"),
    ('{"run": {"seeds": 0}}', "run.seeds"),
    ('{"run": {"seeds": -1}}', "run.seeds"),
    ('{"run": {"seeds": 1.5}}', "run.seeds"),
    ('{"run": {"seeds": "4"}}', "run.seeds"),
    ('{"run": {"seeds": true}}', "run.seeds"),
    ('{"run": {"seeds": null}}', "run.seeds"),
    ('{"run": {"seeds": 1e18}}', "run.seeds"),
    ('{"run": {"first_seed": -3}}', "run.first_seed"),
    ('{"run": {"duration": "2 hours"}}', "run.duration"),
    ('{"run": {"duration": "0s"}}', "run.duration"),
    ('{"run": {"duration": "-1h"}}', "run.duration"),
    ('{"run": {"duration": "1.5us"}}', "run.duration"),
    ('{"run": {"duration": "99999d"}}', "run.duration"),
    ('{"run": {"duration": 3600}}', "run.duration"),
    ('{"run": {"duration": ""}}', "run.duration"),
    ('{"run": {"duration": "1h1h"}}', "run.duration"),
    ('{"run": {"duration": "30m1h"}}', "run.duration"),
    ('{"run": {"drain": "soon"}}', "run.drain"),
    ('{"workload": {"records_per_day": -5}}', "workload.records_per_day"),
    ('{"workload": {"profile": "weekly"}}', "workload.profile"),
    ('{"workload": {"arrivals": "bursty"}}', "workload.arrivals"),
    ('{"workload": {"tick": "1s"}}', "workload.tick"),
    ('{"kafka": {"num.partitions": 0}}', "kafka.num.partitions"),
    ('{"kafka": {"num.partitions": 5000}}', "kafka.num.partitions"),
    ('{"kafka": {"brokers": 1, "replication.factor": 3}}', "kafka.replication.factor"),
    ('{"connect": {"max.pol.records": 1}}', "connect.max.pol.records"),
    ('{"connect": {"tasks.max": 0}}', "connect.tasks.max"),
    ('{"connect": {"offset.flush.interval.ms": -1}}', "connect.offset.flush.interval.ms"),
    ('{"connector": {"errors.tolerance": "some"}}', "connector.errors.tolerance"),
    ('{"connector": {"exactlyOnce": "yes"}}', "connector.exactlyOnce"),
    ('{"connector": {"exactlyOnce": true, "bufferCount": 10}}', "connector.bufferCount"),
    ('{"connector": {"clientVersion": "V2"}}', "connector.clientVersion"),
    ('{"producer": {"acks": "2"}}', "producer.acks"),
    ('{"producer": {"acks": 2}}', "producer.acks"),
    ('{"producer": {"linger.ms": -1}}', "producer.linger.ms"),
    ('{"clickhouse": {"bogus": 1}}', "clickhouse.bogus"),
    ('{"keeper": {"bogus": 1}}', "keeper.bogus"),
    ('{"operator": {"remediation": "pray"}}', "operator.remediation"),
    ('{"faults": {}}', "faults"),
    ('{"faults": [1]}', "faults[0]"),
    ('{"faults": [{}]}', "faults[0]"),
    ('{"faults": [{"kind": "worker_crsh", "rate_per_day": 1}]}', "faults[0].kind"),
    ('{"faults": [{"kind": "worker_crash"}]}', "faults[0]"),
    ('{"faults": [{"kind": "worker_crash", "at": "1h", "rate_per_day": 2}]}', "faults[0]"),
    ('{"faults": [{"kind": "worker_crash", "at": "25h"}]}', "faults[0].at"),
    ('{"faults": [{"kind": "worker_crash", "at": "2h", "target": "worker-3"}]}', "faults[0].target"),
    ('{"faults": [{"kind": "worker_crash", "rate_per_day": -1}]}', "faults[0].rate_per_day"),
    ('{"faults": [{"kind": "worker_crash", "rate_per_day": "often"}]}', "faults[0].rate_per_day"),
    ('{"faults": [{"kind": "keeper_backlog", "at": "1h", "duration": "30m", "capacity_factor": 2}]}',
     "faults[0].capacity_factor"),
    ('{"faults": [{"kind": "keeper_backlog", "at": "1h", "duration": "30m", "capacity_factor": 0}]}',
     "faults[0].capacity_factor"),
    ('{"faults": [{"kind": "worker_crash", "at": "1h", "bogus": 1}]}', "faults[0].bogus"),
    ('{"faults": [{"kind": "worker_crash", "at": "1h"}, {"kind": "nope", "at": "2h"}]}', "faults[1].kind"),
    ('{"name": "s", "config": {"connector.class": "com.clickhouse.kafka.connect.ClickHouseSinkConnector"},'
     ' "tasks": [], "type": "source"}', "connector.type"),
    ('{"name": "x", "config": {"connector.class": "com.clickhouse.kafka.connect.ClickHouseSinkConnector",'
     ' "exactlyOnce": "maybe"}}', "exactlyOnce"),
    ('{"connector.class": "com.clickhouse.kafka.connect.ClickHouseSinkConnector", "tasks.max": "x"}',
     "tasks.max"),
    ('{"connector": {"config": {"connector.class": "ClickHouseSink", "tasks.max": "many"}}}', "tasks.max"),
    ('{"name": "sink", "config": {"tasks.max": "2"}}', "connector.class"),
    ('{"name": "j", "config": {"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector"}}',
     "connector.config.connector.class"),
    ('{"connector.class": "ClickHouseSink", "topics": "orders,payments"}', "connector.config.topics"),
    ('{"connector": {"topics.regex": "orders.*"}}', "connector.topics.regex"),
    ('{"connector": {"jdbcConnectionProperties": "?sockettimeout=1000"}}', "socket_timeout"),
    ('{"connector": {"clickhouseSettings": "insert_quorum=auto"}}', "connector.clickhouseSettings.insert_quorum"),
    ('{"connector": {"clickhouseSettings": "async_insert=1"}}', "connector.clickhouseSettings.async_insert"),
    ('{"run": {"seeds": 0, "bogus": 1}, "conect": {}}', "run.bogus"),
]
for i, (content, word) in enumerate(CONFIGS):
    path = write(f"config_{i}.json", content)
    for name, argv in (READERS[0], READERS[1 + i % (len(READERS) - 1)]):
        case(f"config {content[:40]!r} via {name}", argv(path), os.path.basename(path), word)

# Files that are not there or not files, through every reader.
for name, argv in READERS:
    case(f"missing config via {name}", argv(os.path.join(TMP, "nope.json")), "nope.json", "cannot read")
    case(f"directory as config via {name}", argv(TMP), TMP, "Is a directory")

# ---------------------------------------------------------------------------------------------
# --set, through validate and run.
SETS = [
    ("connect.max.poll.records", "--set"), ("=", "--set"), ("=1", "--set"), (".x=1", "--set"),
    ("run.=1", "--set"), ("run.seeds=", "run.seeds"), ("run.seeds=abc", "run.seeds"),
    ("run..seeds=1", "--set"), ("run.seeds.x=1", "--set"), ("conect.tasks.max=4", "conect"),
    ("faults.kind=worker_crash", "faults"), ("faults=[", "faults"), ("faults={}", "faults"),
    ("connector.name=\udc8c", "UTF-8"), ("run.duration=2 hours", "run.duration"), ("run=5", "--set"),
    ("run.seeds=" + "9" * 400, "run.seeds"), ("workload.records_per_day=-1", "workload.records_per_day"),
    ("connect.max.poll.records=0", "connect.max.poll.records"), ("kafka.num.partitions=1e400", "kafka.num.partitions"),
]
for value, word in SETS:
    for sub in (["validate"], ["run", "--out", OUT]):
        case(f"--set {value[:40]!r} via {sub[0]}", sub + ["--set", value], word)

# ---------------------------------------------------------------------------------------------
# Properties files.
PROPS = [
    ("--consumer-properties", "max.poll.records=abc\n", "max.poll.records"),
    ("--consumer-properties", "max.pol.records=5\n", "max.pol.records"),
    ("--consumer-properties", "max.poll.records=\\uZZZZ\n", "line 1"),
    ("--worker-properties", "max.poll.records=10\n", "consumer.max.poll.records"),
    ("--worker-properties", "offset.flush.interval.ms=-5\n", "offset.flush.interval.ms"),
    ("--producer-properties", "acks=2\n", "acks"),
    ("--producer-properties", "linger.ms=soon\n", "linger.ms"),
    # Java would read a byte-order mark into the first key (then ignored as unknown): said plainly.
    ("--consumer-properties", b"\xef\xbb\xbfmax.poll.records=200\n", "byte-order mark"),
    ("--producer-properties", b"acks=all\nretries=\x00\n", "line 2: a NUL byte"),
]
# Not bad: java.util.Properties.load(InputStream), which Kafka's Utils.loadProps uses, reads
# ISO 8859-1, so any byte is a character (b"client.id=\xff\xfe" is a valid file).
for i, (flag, content, word) in enumerate(PROPS):
    path = write(f"props_{i}.properties", content)
    case(f"{flag} {content[:30]!r}", ["validate", flag, path], os.path.basename(path), word)
for flag in ("--consumer-properties", "--worker-properties", "--producer-properties"):
    case(f"{flag} missing file", ["run", "--out", OUT, flag, os.path.join(TMP, "nope.properties")],
         "nope.properties")
    case(f"{flag} directory", ["validate", flag, TMP], TMP)

# ---------------------------------------------------------------------------------------------
# Flags.
FLAGS = [
    (["run", "--bogus-flag"], "--bogus-flag"), (["run", "--seeds", "0"], "--seeds"),
    (["run", "--seeds", "-1"], "--seeds"), (["run", "--seeds", "abc"], "--seeds"),
    (["run", "--seeds", "99999999999999999999"], "--seeds"), (["run", "--seeds", "1e3"], "--seeds"),
    (["run", "--threads", "0"], "--threads"), (["run", "--threads", "abc"], "--threads"),
    (["run", "--threads", "2000"], "--threads"), (["run", "--format", "xml"], "--format"),
    (["run", "--seed", "-1"], "--seed"), (["run", "--seed", "18446744073709551616"], "--seed"),
    (["run", "--seed", "1", "--seeds", "2"], "--seed"), (["run", "--per-seed"], "--per-seed"),
    (["run", "--out"], "--out"), (["run", "--out", os.path.join(TMP, "no", "dir", "r.json")], "cannot write"),
    (["run", "--out", TMP], "cannot write"), (["run", "--seeds"], "--seeds"),
    (["explain", "--seed", "abc"], "--seed"), (["explain", "--seed", "1", "--max-groups", "-1"], "--max-groups"),
    (["explain", "--format", "csv"], "--format"), (["trace", "--seed", "1"], "--out"),
    (["trace", "--seed", "1", "--from", "abc", "--out", OUT], "--from"),
    (["trace", "--seed", "1", "--to", "1 hour", "--out", OUT], "--to"),
    (["trace", "--seed", "1", "--from", "2h", "--to", "1h", "--out", OUT], "--from"),
    (["trace", "--seed", "1", "--from", "3d", "--out", OUT], "--from"),
    (["trace", "--seed", "1", "--out", TMP], "cannot write"),
    (["check"], "--expect"), (["check", "--expect", os.path.join(TMP, "nope.json")], "nope.json"),
    (["check", "--expect", write("expect_bad.json", '{"expect": [')], "expect_bad.json"),
    (["check", "--expect", write("expect_empty.json", '{"expect": []}')], "expect"),
    (["check", "--expect", write("expect_metric.json", '{"expect": [{"metric": "dups", "max": 0}]}')], "dups"),
    (["check", "--expect", write("expect_nobound.json", '{"expect": [{"metric": "duplicate_rows_per_day"}]}')],
     "expect[0]"),
    (["check", "--expect", write("expect_conf.json",
                                 '{"expect": [{"metric": "duplicate_rows_per_day", "max": 0, "confidence": 2}]}')],
     "confidence"),
    (["check", "--expect", write("expect_minmax.json",
                                 '{"expect": [{"metric": "lost_records", "max": 0, "min": 3}]}')],
     "expect[0].min"),
    (["check", GOOD, "--expect", write("expect_perday.json", '{"expect": [{"metric": "lost_records_per_day", "max": 0}]}'),
      "--set", "run.duration=6h"], "lost_records_per_window"),
    (["run", GOOD, "--seeds", "1", "--out", GOOD], "never overwrites"),
    (["validate", GOOD, "--print", "--out", GOOD], "never overwrites"),
    (["decide", "--cases", write("own_cases.jsonl", '{"state":"NONE","stored":null,"batch":[0,9]}\n'), "--out",
      write("own_cases.jsonl", '{"state":"NONE","stored":null,"batch":[0,9]}\n')], "never overwrites"),
    (["run", write("manifest_sweep.json", '{"version": 1, "grid": {}, "points": 1, "base_config": {}}')],
     "sweep's manifest"),
    (["check", "--expect", EXPECT, "--seeds", "0"], "--seeds"),
    (["check", "--expect", EXPECT, "--seeds", "many"], "--seeds"),
    (["check", "--expect", EXPECT, "--seeds", "auto", "--max-seeds", "0"], "--max-seeds"),
    (["compare", GOOD], "b"), (["compare"], "a"), (["compare", GOOD, GOOD, "--format", "csv"], "--format"),
    (["lint", "--quick-seeds", "0"], "--quick-seeds"), (["lint", "--format", "csv"], "--format"),
    (["lint", "--effect-seeds", "-2"], "--effect-seeds"),
    (["validate", "--print", "--reference", "--bogus"], "--bogus"),
    (["frobnicate"], "frobnicate"), ([], "subcommand"), (["--version-please"], "--version-please"),
]
# shrink and --importance (rare failures).
RARE = write("rare.json", '{"faults": [{"kind": "leader_change", "rate_per_day": 1.44, "duration": "150s"}],'
                          ' "run": {"duration": "10m", "drain": "1m", "seeds": 2}}')
FLAGS += [
    (["shrink", RARE, "--until", "lost_records > 0"], "--seed"), (["shrink", RARE, "--seed", "1"], "--until"),
    (["shrink", RARE, "--seed", "1", "--expect", os.path.join(TMP, "nope.json")], "nope.json"),
    (["shrink", RARE, "--seed", "1", "--expect", write("shrink_expect.json", '{"expect": []}')], "expect"),
    (["shrink", RARE, "--seed", "1", "--until", "lost_record > 0"], "lost_record"),
    (["shrink", RARE, "--seed", "1", "--until", "lost_records"], "METRIC OP NUMBER"),
    (["shrink", RARE, "--seed", "1", "--until", "lost_records > x"], "expected a number"),
    (["shrink", RARE, "--seed", "1", "--until", "lost_records > 0 and"], "--until"),
    (["shrink", RARE, "--seed", "1", "--until", "lost_records > 0", "--max-runs", "0"], "--max-runs"),
    (["shrink", RARE, "--seed", "1", "--until", "lost_records > 0", "--out", TMP], "cannot write"),
    (["shrink", os.path.join(TMP, "nope.json"), "--seed", "1", "--until", "lost_records > 0"], "nope.json"),
    (["run", RARE, "--importance", "worker_crash=10"], "worker_crash"),
    (["run", RARE, "--importance", "leader_change=0"], "leader_change"),
    (["run", RARE, "--importance", "leader_change=-2"], "leader_change"),
    (["run", RARE, "--importance", "leader_change=1e9"], "leader_change"),
    (["run", RARE, "--importance", "leader_change=x"], "leader_change"),
    (["run", RARE, "--importance", "leader_change"], "KIND=FACTOR"),
    (["run", RARE, "--importance", "=5"], "KIND=FACTOR"),
    (["run", RARE, "--importance", "leader_change=2,leader_change=3"], "twice"),
    (["run", RARE, "--importance", "leader_change=2,"], "KIND=FACTOR"),
    (["check", RARE, "--expect", EXPECT, "--importance", "broker_crash=2"], "broker_crash"),
    (["compare", RARE, RARE, "--importance", "leader_change=nan"], "leader_change"),
    (["sweep", RARE, "--grid", GRID, "--out", os.path.join(OUT_DIR, "sw"), "--importance", "x=2"], "--importance"),
    (["explain", RARE, "--seed", "1", "--importance", "leader_change=0"], "leader_change"),
    (["trace", RARE, "--seed", "1", "--out", OUT, "--importance", "bogus=1"], "bogus"),
]
for argv, word in FLAGS:
    case(f"flags {' '.join(argv)[:60]}", argv, word)

# ---------------------------------------------------------------------------------------------
# Sweeps: grids, shards, directories, merge.
SWEEP_OUT = os.path.join(OUT_DIR, "sw")
GRIDS = [
    ("[]", "grid"), ("{}", "grid"), ('{"connect.max.poll.records": []}', "connect.max.poll.records"),
    ('{"connect.max.poll.records": 5}', "connect.max.poll.records"), ('{"bogus.key": [1]}', "bogus.key"),
    ('{"run.seeds": [1, 2]}', "run.seeds"), ('{"connect.max.poll.records": [0]}', "connect.max.poll.records"),
    ('{"connect.max.poll.records": [100, "x"]}', "connect.max.poll.records"), ('{"faults": [[{}]]}', "faults"),
    ('{"connect": [1]}', "connect"), ("{", "malformed JSON"),
]
for i, (content, word) in enumerate(GRIDS):
    path = write(f"grid_{i}.json", content)
    case(f"sweep grid {content[:40]!r}", ["sweep", GOOD, "--grid", path, "--out", SWEEP_OUT], word)
for shard in ("0/2", "3/2", "abc", "1/0", "1/", "/2", "-1/2"):
    case(f"sweep --shard {shard}", ["sweep", GOOD, "--grid", GRID, "--out", SWEEP_OUT, "--shard", shard], "--shard")
case("sweep without --grid", ["sweep", GOOD, "--out", SWEEP_OUT], "grid")
case("sweep without --out", ["sweep", GOOD, "--grid", GRID], "--out")
case("sweep --grid missing", ["sweep", GOOD, "--grid", os.path.join(TMP, "nope_grid.json"), "--out", SWEEP_OUT],
     "nope_grid.json")
case("sweep --out is a file", ["sweep", GOOD, "--grid", GRID, "--out", GOOD], GOOD)
OTHER_SWEEP = os.path.join(TMP, "other_sweep")
os.makedirs(OTHER_SWEEP)
write("other_sweep/sweep.json", '{"pipesim_version": "0", "points": 1}')
case("sweep --resume of another sweep", ["sweep", GOOD, "--grid", GRID, "--out", OTHER_SWEEP, "--resume"],
     OTHER_SWEEP)
case("sweep into a directory holding a sweep", ["sweep", GOOD, "--grid", GRID, "--out", OTHER_SWEEP], OTHER_SWEEP)
case("merge with no shards", ["merge", "--out", os.path.join(OUT_DIR, "m")], "shards")
case("merge of a missing directory", ["merge", os.path.join(TMP, "nope_dir"), "--out", os.path.join(OUT_DIR, "m")],
     "nope_dir")
case("merge of a directory without a sweep", ["merge", TMP, "--out", os.path.join(OUT_DIR, "m")], TMP)
case("merge of a broken sweep", ["merge", OTHER_SWEEP, "--out", os.path.join(OUT_DIR, "m")], OTHER_SWEEP)

# ---------------------------------------------------------------------------------------------
# report: results that are not results, or not whole ones; --out targets.
REPORT_OUT = os.path.join(OUT_DIR, "report.html")
RUN_OK = ('{"seeds": {"first": 1, "count": 1}, "estimates": {}, "metrics": {}, "config": {}, '
          '"config_digest": "x", "runs": []}')
RESULTS = [
    ("", "not JSON"), ("{", "not JSON"), ('{"a": 1}\x00', "not JSON"), ("[]", "not a result"), ("5", "not a result"),
    ('{"workload": {"records_per_day": 1000}}', "not a result"),
    ('{"seeds": {"first": 1, "count": 1}, "estimates": [], "metrics": {}}', "not a complete run result"),
    ('{"seeds": {"first": 1}, "estimates": {}, "metrics": {}}', "not a complete run result"),
    ('{"seeds": {"first": 1, "count": 1}, "estimates": {"duplicate_rows_per_day": {"value": "x"}}, "metrics": {}}',
     "not a complete run result"),
    (RUN_OK[:-1] + ', "extreme_seeds": [{"metric": "duplicate_rows"}]}', "not a complete run result"),
    ('{"a": {}, "b": {}, "metrics": {}, "seeds": {"first": 1, "count": 2}}', "not a complete compare result"),
    ('{"a": {"file": null}, "b": {"file": null}, "seeds": {"count": 2}, "metrics": {"x": {"a_mean": 1}}}',
     "not a complete compare result"),
    ('{"passed": true, "expectations": [{"metric": "x"}], "seeds": {"count": 1}, "file": null}',
     "not a complete check result"),
    ('{"passed": true, "expectations": 3}', "not a complete check result"),
]
for i, (content, word) in enumerate(RESULTS):
    path = write(f"result_{i}.json", content)
    case(f"report of {content[:40]!r}", ["report", path, "--out", REPORT_OUT], path, word)
BROKEN_SWEEPS = [
    ('{"grid": {"a": [1, 2]}, "seeds": {"count": 1}, "points": 2}', '{"point": 0, "params": {"a": 1}\n', "line 1"),
    ('{"grid": {"a": [1, 2]}, "seeds": {"count": 1}, "points": 2}', '{"point": 0, "params": {}}\n',
     "not a complete sweep result"),
    ('{"points": 2}', "", "not a complete sweep result"), ("{", "", "not JSON"),
]
for i, (manifest, lines, word) in enumerate(BROKEN_SWEEPS):
    d = os.path.join(TMP, f"broken_sweep_{i}")
    os.makedirs(d)
    write(f"broken_sweep_{i}/sweep.json", manifest)
    write(f"broken_sweep_{i}/points.jsonl", lines)
    case(f"report of broken sweep {i}", ["report", d, "--out", REPORT_OUT], d, word)
GOOD_RESULT = write("good_result.json", RUN_OK)
case("report of a missing result", ["report", os.path.join(TMP, "nope_result.json"), "--out", REPORT_OUT],
     "nope_result.json")
case("report of a directory without a sweep", ["report", OUT_DIR, "--out", REPORT_OUT], OUT_DIR, "sweep.json")
case("report --out is a directory", ["report", GOOD_RESULT, "--out", TMP], TMP)
case("report --out in a missing directory", ["report", GOOD_RESULT, "--out", os.path.join(TMP, "nodir", "r.html")],
     "nodir")
case("report without --out", ["report", GOOD_RESULT], "--out")
case("report without a result", ["report", "--out", REPORT_OUT], "result")
case("report with an unknown flag", ["report", GOOD_RESULT, "--out", REPORT_OUT, "--stories"], "--stories")

# ---------------------------------------------------------------------------------------------
# decide: case lines and flags.
LINES = [
    ('{"state":"NONE","batch":[1,2]', "line 1"), ('{"state":"NONE","batch":[1,2],"stord":[1,2]}', "stord"),
    ('{"state":"AFTER_PROCESSING","batch":[1,2]}', "stored"), ('{"state":"DONE","batch":[1,2]}', "DONE"),
    ('{"state":"NONE","batch":[5,2]}', "batch"), ('{"state":"NONE","batch":[-1,2]}', "batch"),
    ('{"state":"NONE","batch":[0,1e400]}', "line 1"), ('{"state":"NONE","batch":[1,2],"batch":[3,4]}', "batch"),
    ('{"state":"NONE","batch":5}', "batch"), ('{"state":"NONE","batch":[1]}', "batch"),
    ('{"state":"NONE","batch":["a","b"]}', "batch"), ('{"state":3,"batch":[1,2]}', "state"),
    ("[]", "line 1"), ("null", "line 1"),
    ('{"state":"NONE","batch":[1,99999999999999999999999]}', "batch"), ('{"state":"NONE","batch":[1.5,2]}', "batch"),
    ('{"state":"BEFORE_PROCESSING","batch":[1,2],"stored":[3]}', "stored"), (b'{"state":"\xff"}', "line 1"),
    ('{"batch":[1,2]}', "state"),
    (b'{"state":"NONE","batch":[1,2],"tolerateStateMismatch":false}\x00', "NUL byte"),
]
# Not bad: a NONE line may carry a stored range (ignored by the decision, echoed in the output;
# tests/decide_cases_test.cpp NoneMayGiveStoredRange); only the --stored flag is refused with NONE.
for i, (line, word) in enumerate(LINES):
    path = write(f"cases_{i}.jsonl", line + (b"\n" if isinstance(line, bytes) else "\n"))
    case(f"decide line {str(line)[:40]}", ["decide", "--cases", path], word)
DECIDE_FLAGS = [
    (["decide", "--state", "X", "--batch", "1,2"], "--state"), (["decide", "--state", "NONE", "--batch", "a,b"], "--batch"),
    (["decide", "--state", "NONE", "--batch", "5"], "--batch"),
    (["decide", "--state", "NONE", "--batch", "1,5", "--stored", "1,3"], "--stored"),
    (["decide", "--state", "AFTER_PROCESSING", "--batch", "1,5"], "--stored"),
    (["decide", "--state", "AFTER_PROCESSING", "--batch", "1,5", "--stored", "3"], "--stored"),
    (["decide", "--cases", os.path.join(TMP, "nope.jsonl")], "nope.jsonl"), (["decide", "--cases", TMP], TMP),
    (["decide"], "--cases"),
]
for argv, word in DECIDE_FLAGS:
    case(f"decide flags {' '.join(argv[1:])[:60]}", argv, word)


def main():
    failed = 0
    for label, argv, words in cases:
        shutil.rmtree(OUT_DIR, ignore_errors=True)
        os.makedirs(OUT_DIR)
        try:
            done = subprocess.run([PIPESIM] + argv, capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
                                  env=dict(os.environ, PIPESIM_NO_PROGRESS="1"))
            rc, out, err = done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            rc, out, err = "timeout", "", ""
        left = sorted(os.listdir(OUT_DIR))
        problems = []
        if rc != 2:
            problems.append(f"exit {rc}, expected 2")
        if out:
            problems.append(f"stdout not empty: {out[:200]!r}")
        if not err.startswith("pipesim"):
            problems.append("stderr does not start with \"pipesim\"")
        problems += [f"message lacks {w!r}" for w in words if w not in err]
        problems += [f"crash report ({w!r})" for w in CRASH_WORDS if w in err]
        if left:
            problems.append(f"wrote {left}")
        if problems:
            failed += 1
            print(f"FAIL - {label}: {'; '.join(problems)}\n       argv: {argv}\n       stderr: {err.strip()[:600]}")
    print(f"bad input sweep: {len(cases) - failed} of {len(cases)} clean (exit 2, a message naming what and where, "
          f"no crash, nothing written)")
    shutil.rmtree(TMP, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
