#!/usr/bin/env bash
# synth-findings.sh DB N [RUN]: adds N made-up findings to an asyncfuzz database (one a real
# campaign made, so its schema is current), for the report's tests and benchmark: each with a
# minimized case and its reproducer, a replay command, detailed forms and a verdict on each of
# 16 configurations (22.1.8 and 19.1.7, two pipelines, two targets, two JIT levels), statuses,
# classes and times spread out, and the run's cases on each configuration. Finding 1 carries markup and quotes in its cause, detail and
# reproducer; finding 2 has the text "zz-unique-token" in its cause. RUN: the run the forms
# and verdicts name (default: the newest).
set -eu
db=$1
n=$2
run=${3:-$(sqlite3 "$db" "SELECT coalesce(max(id), 1) FROM runs")}
sqlite3 "$db" <<EOF
BEGIN;
CREATE TEMP TABLE k(i INTEGER PRIMARY KEY);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $n)
INSERT INTO k SELECT i FROM s;
INSERT INTO cases(hash, json, mlir, seed, ops)
  SELECT 'synthetic-' || i, '{"format": "asyncfuzz-case"}',
    CASE i WHEN 1 THEN '// RUN: mlir-opt %s | FileCheck %s' || char(10) ||
      '// </pre><script>window.__xss = 3</script> "quoted" ''single''' || char(10) ||
      'func.func @main() { return }'
    ELSE '// RUN: mlir-opt %s --pass-pipeline=''builtin.module(gpu-to-llvm)''' || char(10) ||
      'func.func @main() {' || char(10) || '  %t' || i || ' = gpu.wait async' || char(10) ||
      '  gpu.wait [%t' || i || ']' || char(10) || '  return' || char(10) || '}' END,
    'seed-' || i, 1 + i % 9
  FROM k;
INSERT INTO findings(signature, class, lowering, detail, first_seen, last_seen, count,
    repro_runs, repro_hits, status, smallest_ops, minimized_case, replay)
  SELECT CASE i
      WHEN 1 THEN 'mlir-opt|race|<script>window.__xss = 1</script>"><img src=x onerror="window.__xss = 2">'
      WHEN 2 THEN 'mlir-opt|missing-edge|own-dep|gpu.memcpy async zz-unique-token'
      ELSE 'mlir-opt|' || CASE i % 5 WHEN 0 THEN 'missing-edge|extra-dep|synthetic-' || i
        WHEN 1 THEN 'lowering_unconverted|gpu.op' || i || ' async'
        WHEN 2 THEN 'misused-handle|stream|used-after-destroy|destroyed-by:role' || i
        WHEN 3 THEN 'runtime_error|CUDA_ERROR_ILLEGAL_ADDRESS|host access to device memory|op' || i
        ELSE 'lifetime|leaked_stream|made-by:gpu.kind' || i END END,
    CASE i % 5 WHEN 0 THEN 'race' WHEN 1 THEN 'lowering_unconverted' WHEN 2 THEN 'lifetime'
      WHEN 3 THEN 'runtime_error' ELSE 'lifetime' END,
    CASE WHEN i % 7 = 0 THEN 'builtin' ELSE 'mlir-opt' END,
    CASE i WHEN 1 THEN '</pre></td></tr></table><script>window.__xss = 4</script> & "quotes"'
      ELSE 'checker: 1 report(s); first error: data_race (RAW) on b' || i || ' [0, 64)' END,
    strftime('%s', 'now') - 86400 + 97 * i, strftime('%s', 'now') - 3600 + 13 * i,
    1 + (i * 37) % 900, 5, i % 6,
    CASE WHEN i % 3 = 0 THEN 'known' WHEN i % 11 = 0 THEN 'wontfix' ELSE 'new' END,
    10 + i % 30, (SELECT id FROM cases WHERE hash = 'synthetic-' || i),
    'asyncfuzz check failures/' || printf('%016x', i) || '/minimized.json --lowering mlir-opt --schedules lazy@' || (1000 + i)
  FROM k;
CREATE TEMP TABLE fk AS SELECT fi.id AS id, k.i AS i FROM findings fi
  JOIN cases c ON c.id = fi.minimized_case JOIN k ON c.hash = 'synthetic-' || k.i;
INSERT INTO forms(finding, run, detailed, hits)
  SELECT f.id, $run, 'mlir-opt|race|missing-edge|data_race.RAW|launch.af_fill->memcpy.D2H|form' || j.i,
    1 + (f.i * j.i) % 50
  FROM fk f JOIN k j ON j.i <= 1 + f.i % 4;
INSERT INTO finding_configs(finding, config, lowering_version, llvm, llvm_key, pipeline, target,
    jit, class, signature, reproduces, run, checked)
  SELECT f.id,
    'mlir-opt-' || CASE WHEN c.i <= 8 THEN '22.1.8' ELSE '19.1.7' END ||
      CASE WHEN (c.i - 1) % 8 >= 4 THEN '@async-region' ELSE '' END ||
      CASE WHEN (c.i - 1) % 4 >= 2 THEN '/rocdl' ELSE '' END ||
      CASE WHEN (c.i - 1) % 2 = 1 THEN '+Odefault' ELSE '' END,
    'Debian LLVM version ' || CASE WHEN c.i <= 8 THEN '22.1.8' ELSE '19.1.7' END,
    CASE WHEN c.i <= 8 THEN '22.1.8' ELSE '19.1.7' END,
    CASE WHEN c.i <= 8 THEN 22001008 ELSE 19001007 END,
    CASE WHEN (c.i - 1) % 8 >= 4 THEN 'async-region' ELSE 'default' END,
    CASE WHEN (c.i - 1) % 4 >= 2 THEN 'rocdl' ELSE 'nvvm' END,
    CASE WHEN (c.i - 1) % 2 = 1 THEN 'Odefault' ELSE 'O0' END,
    CASE (f.i + c.i) % 3 WHEN 0 THEN 'race' WHEN 1 THEN 'pass' ELSE 'lowering_rejected' END,
    CASE (f.i + c.i) % 3 WHEN 1 THEN '' ELSE 'mlir-opt|other|verdict' || c.i END,
    (f.i + c.i) % 3 = 0 AND NOT (f.i % 4 = 0 AND c.i > 8), $run, strftime('%s', 'now')
  FROM fk f JOIN k c ON c.i <= 16;
INSERT INTO run_configs(run, config, lowering_version, cases, executed, failures)
  SELECT DISTINCT $run, config, lowering_version, 200, 150 + length(config) % 40,
    40 + length(config) % 50 FROM finding_configs
  WHERE true ON CONFLICT(run, config, lowering_version) DO NOTHING;
COMMIT;
EOF
