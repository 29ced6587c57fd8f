"""clock_service — the pure clock core of qizhong.

No I/O and no imports from the other qizhong packages: time comes in through an injected
monotonic source, so a whole game runs in microseconds under a fake clock.
"""

from clock_service.clock import ClockError, GameClock, Phase, Reading
from clock_service.events import Adjusted, ClockEvent, Flagged, Moved, Paused, Resumed, Started
from clock_service.knockout import (
    ColourChoice,
    Knockout,
    KnockoutError,
    Lot,
    Placing,
    ProposedGame,
    merge_standings,
)
from clock_service.knockout import Stage as KnockoutStage
from clock_service.referee import Proposal, ProposalKind, ProposalStatus, Referee
from clock_service.regulation import Offence, Regulation, RegulationError, Tiebreak
from clock_service.side import Side
from clock_service.standings import (
    Bye,
    GameRecord,
    Policy,
    Standing,
    StandingsError,
    compute_standings,
    standings_csv,
    standings_json,
)
from clock_service.timecontrol import Bonus, ByoYomi, Period, TimeControl

__all__ = [
    "Adjusted",
    "Bonus",
    "Bye",
    "ByoYomi",
    "ClockError",
    "ClockEvent",
    "ColourChoice",
    "Flagged",
    "GameClock",
    "GameRecord",
    "Knockout",
    "KnockoutError",
    "KnockoutStage",
    "Lot",
    "Moved",
    "Offence",
    "Paused",
    "Period",
    "Phase",
    "Placing",
    "Policy",
    "Proposal",
    "ProposalKind",
    "ProposalStatus",
    "ProposedGame",
    "Reading",
    "Referee",
    "Regulation",
    "RegulationError",
    "Resumed",
    "Side",
    "Standing",
    "StandingsError",
    "Started",
    "Tiebreak",
    "TimeControl",
    "compute_standings",
    "merge_standings",
    "standings_csv",
    "standings_json",
]
