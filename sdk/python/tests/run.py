"""Runs the SDK's tests and prints a line per test, "ok NAME", "FAIL NAME" or
"skip NAME", as the other test tiers do (tests/run.sh counts them)."""

import os
import sys
import unittest


class Result(unittest.TextTestResult):
    def addSuccess(self, test):
        super().addSuccess(test)
        print(f"ok sdk {test.id()}", flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        print(f"FAIL sdk {test.id()}", flush=True)

    def addError(self, test, err):
        super().addError(test, err)
        print(f"FAIL sdk {test.id()} (error)", flush=True)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        print(f"{'FAIL' if err is not None else 'ok'} sdk {subtest.id()}", flush=True)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        print(f"skip sdk {test.id()} ({reason})", flush=True)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py")
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=0, resultclass=Result)
    result = runner.run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)
