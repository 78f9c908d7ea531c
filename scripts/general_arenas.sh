#!/usr/bin/env bash
# The report arenas of the general model (docs/training.md, "One model for every board"):
# on every built-in board, az (its default budget) against default mcts and against greedy, and the
# raw policy (az:sims=0) against greedy; on the boards with a specialist, the general model against
# it. 40 games a pair, seats alternating, 4-ply openings, on REPORT seeds the model was not chosen on
# (the run chose its candidates by its own evaluations, from openings drawn with the run's seed, and
# the shipped one was picked among those with arenas on seed 1). Each arena writes OUT/BOARD-PAIR/
# (games.jsonl, results.json) and OUT/BOARD-PAIR.txt; run again, it resumes. WORKERS (default 2)
# is the arenas' --workers.
#
#   bash scripts/general_arenas.sh OUT MODEL [SEED]      # e.g. bash scripts/general_arenas.sh /tmp/report general 2026
set -euo pipefail
out=${1:?output folder}; model=${2:-general}; seed=${3:-2026}
az="az:model=$model"
mkdir -p "$out"
. "$(dirname "$0")/general_pair.sh"
for board in petit_menec small medium kerlescan large kermario le_menec; do
    run "$board" az-mcts "$az,mcts"
    run "$board" az-greedy "$az,greedy"
    run "$board" raw-greedy "$az:sims=0,greedy"
done
for board in petit_menec small medium; do
    run "$board" az-specialist "$az,az:model=$board"
done
