# The measurements of docs/experiment.md's "Verdicts" section (the numbers do not depend on
# WORKERS). Run from the repository root:  WORKERS=2 OUT=/tmp bash benchmarks/verdicts_all.sh
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
OUT=${OUT:-.}
B=benchmarks/bench_verdicts.py
W=${WORKERS:-2}
python3 $B speed --runs 300 --workers $W > $OUT/speed_binary.json
python3 $B speed --runs 60 --workers $W --reward beta --step 250 --width-at 5000 --cap 10000 --tune-n 2000 > $OUT/speed_beta.json
python3 $B revenue --runs 16 --workers $W --step 10000 --cap 400000 --tune-n 100000 > $OUT/revenue.json
python3 $B floor --runs 30 > $OUT/floor.json
cat $OUT/speed_binary.json $OUT/speed_beta.json $OUT/revenue.json $OUT/floor.json
python3 $B cover --runs 300 --seed 12 > $OUT/cover.json
