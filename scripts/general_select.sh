#!/usr/bin/env bash
# The selection arenas of a general-model candidate (docs/training.md, "One model for every board"),
# on the SELECTION seed (1 by default), never on a report seed: on every built-in board the
# candidate against the shipped general model (20 games), and, for the two targets the shipped model
# was closest to missing, the candidate against the small specialist and against greedy on
# kerlescan (40 games each). Seats alternate, 4-ply openings. Each arena writes OUT/BOARD-PAIR/
# (games.jsonl, results.json) and OUT/BOARD-PAIR.txt; run again, it resumes. WORKERS (default 2)
# is the arenas' --workers; `python scripts/general_report.py OUT` prints the table.
#
#   bash scripts/general_select.sh OUT CANDIDATE.npz [SEED]      # e.g. bash scripts/general_select.sh /tmp/select runs/general/model.npz
set -euo pipefail
out=${1:?output folder}; candidate=${2:?candidate .npz}; seed=${3:-1}
az="az:model=$candidate"
mkdir -p "$out"
. "$(dirname "$0")/general_pair.sh"
for board in petit_menec small medium kerlescan large kermario le_menec; do
    run "$board" az-general "$az,az:model=general" 20
done
run small az-specialist "$az,az:model=small" 40
run kerlescan az-greedy "$az,greedy" 40
