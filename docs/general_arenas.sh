#!/usr/bin/env bash
# The report arenas of the general model (docs/training.md, "One model for every board"):
# on every built-in board, az (its default budget) against default mcts and against greedy, and the
# raw policy (az:sims=0) against greedy; on the boards with a specialist, the general model against
# it. 40 games a pair, seats alternating, 4-ply openings, on REPORT seeds the model was not chosen on
# (the run chose its candidates with its own evaluation's seed, 0, and docs/general_select.sh with
# seed 1). Each arena writes OUT/BOARD-PAIR/ (games.jsonl, results.json); run again, it resumes.
#
#   bash docs/general_arenas.sh OUT MODEL [SEED]      # e.g. bash docs/general_arenas.sh /tmp/report general 2026
set -euo pipefail
out=${1:?output folder}; model=${2:-general}; seed=${3:-2026}
az="az:model=$model"
mkdir -p "$out"
run() {  # board name agents
    carnac arena --board "$1" --agents "$3" --games 40 --openings 4 --seed "$seed" --out "$out/$1-$2" --no-progress \
        > "$out/$1-$2.txt"
    echo "$1 $2: $(python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['pairs'][0]; print(f\"{p['wins_a']}-{p['draws']}-{p['wins_b']}\")" "$out/$1-$2/results.json")"
}
for board in petit_menec small medium kerlescan large kermario le_menec; do
    run "$board" az-mcts "$az,mcts"
    run "$board" az-greedy "$az,greedy"
    run "$board" raw-greedy "$az:sims=0,greedy"
done
for board in petit_menec small medium; do
    run "$board" az-specialist "$az,az:model=$board"
done
