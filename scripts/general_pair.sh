# Sourced by scripts/general_arenas.sh and scripts/general_select.sh: `run BOARD NAME AGENTS [GAMES]` plays
# one arena pair (GAMES, default 40; seats alternating, 4-ply openings, seed $seed, --workers
# $WORKERS or 2) into $out/BOARD-NAME/ with its table in $out/BOARD-NAME.txt, and prints its
# wins-draws-losses. Run again, an arena resumes.
run() {  # board name agents [games]
    carnac arena --board "$1" --agents "$3" --games "${4:-40}" --openings 4 --seed "$seed" --workers "${WORKERS:-2}" --out "$out/$1-$2" --no-progress \
        > "$out/$1-$2.txt"
    echo "$1 $2: $(python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['pairs'][0]; print(f\"{p['wins_a']}-{p['draws']}-{p['wins_b']}\")" "$out/$1-$2/results.json")"
}
