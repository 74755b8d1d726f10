# The measurements of docs/experiment.md's "Verdicts" section, in parallel processes (the
# numbers do not depend on --workers). Run from the repository root:  bash benchmarks/verdicts_all.sh  (WORKERS=N, OUT=folder)
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
OUT=${OUT:-.}
B=benchmarks/bench_verdicts.py
W=${WORKERS:-16}
timeout 170 python3 $B speed --runs 300 --workers $W > $OUT/speed_binary.json; cat $OUT/speed_binary.json
timeout 100 python3 $B speed --runs 300 --workers $W --reward beta --step 100 --width-at 5000 --cap 10000 --tune-n 2000 > $OUT/speed_beta.json; cat $OUT/speed_beta.json
timeout 170 python3 $B revenue --runs ${REVENUE_RUNS:-64} --workers $W --step 5000 --cap 400000 --tune-n 100000 > $OUT/revenue.json; cat $OUT/revenue.json
timeout 90 python3 $B floor --runs 100 > $OUT/floor.json; cat $OUT/floor.json
