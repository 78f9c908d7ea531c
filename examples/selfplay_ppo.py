"""Self-play PPO in plain PyTorch: one policy plays both seats of many games at once.

    pip install -e ".[train]"
    python examples/selfplay_ppo.py                          # small board, about 10 minutes on 2 cores
    python examples/selfplay_ppo.py --board petit_menec --minutes 5 --augment
    CARNAC_SMOKE=1 python examples/selfplay_ppo.py           # tiny budgets: checks that it runs

The code is in :mod:`carnac_env.train.ppo` (read it there: about 150 lines of learning code,
no RL library), so that Tutorial 4 runs after a plain ``pip install`` too;
``python -m carnac_env.train.ppo`` is the same command. The trained policy enters the arena
as ``carnac_env.train.ppo.SelfPlayAgent:path=OUT/policy.pt``.
"""

from carnac_env.train.ppo import main

if __name__ == "__main__":
    main()
