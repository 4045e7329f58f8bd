"""Sample scenarios reproduce their golden files (regenerate only on purpose)."""

import io

import pandas as pd
import pytest
from golden.regenerate import HERE, golden_cases, golden_frames

CASES = list(golden_cases())


@pytest.mark.parametrize("scenario, policy, stem", CASES, ids=[f"{c[2]}-{c[1]}" for c in CASES])
def test_sample_scenario_matches_golden_files(scenario, policy, stem):
    for name, frame in golden_frames(scenario).items():
        expected = pd.read_csv(HERE / f"{stem}.{policy}.{name}.csv")
        actual = pd.read_csv(io.StringIO(frame.to_csv(index=False, float_format="%.12g")))
        pd.testing.assert_frame_equal(actual, expected, check_dtype=False)
