package io.github.pulsarbroadcast.bench;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.bench.core.Mode;
import io.github.pulsarbroadcast.bench.fleet.FleetState;
import org.testng.annotations.Test;

/**
 * A run whose consumer fleet reconnected although nothing moved the topic is not the broker's result: at 100,000
 * consumers past the sustainable rate the fleet once ran out of its 1 GiB of direct memory, reconnected 138,900
 * times, and the run still reported "ok" with the broker's figures; capacity runs did not even record the
 * reconnects (benchmarks.md, "Overload, ninth session").
 */
public class FleetErrorsFailTheRunTest {

    private static ModeResult result(int consumers) {
        ModeResult result = new ModeResult(Mode.BROADCAST, consumers, 1);
        result.client = new ModeResult.ClientUsage();
        return result;
    }

    private static FleetState reconnected(long times) {
        FleetState fleet = new FleetState();
        fleet.reconnects = times;
        fleet.firstError = "OutOfDirectMemoryError";
        return fleet;
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void reconnectsWithoutATopicMoveFailTheRun() {
        ModeResult result = result(100_000);
        Drain.noteFleet(new BenchSettings(), result, reconnected(138_900));
        assertEquals(result.status, ModeResult.FAILED);
        assertTrue(result.reason.contains("138,900") && result.reason.contains("OutOfDirectMemoryError"),
                result.reason);
        assertEquals(result.client.reconnects, 138_900);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void reconnectsAfterATopicMoveAreExpected() {
        BenchSettings s = new BenchSettings();
        s.moveTopicAfterSeconds = 20;
        ModeResult result = result(1_000);
        Drain.noteFleet(s, result, reconnected(1_000));
        assertTrue(result.ok(), result.status);
        assertEquals(result.notes.size(), 1, "still noted");
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aCapacityStepInWhichTheFleetReconnectedFails() {
        ModeResult.CapacityStep first = new ModeResult.CapacityStep();
        first.passed = true;
        first.fleetErrors = 0;
        ModeResult.CapacityStep second = new ModeResult.CapacityStep();
        second.passed = true;
        second.fleetErrors = 0;
        assertTrue(!CapacitySteps.fleetFailed(second, java.util.List.of(first), null) && second.passed,
                "no reconnects: the step stands");
        ModeResult.CapacityStep third = new ModeResult.CapacityStep();
        third.passed = true;
        third.fleetErrors = 306_000;
        assertTrue(CapacitySteps.fleetFailed(third, java.util.List.of(first, second), "OutOfDirectMemoryError"));
        assertTrue(!third.passed, "a step in which the fleet reconnected does not pass");
        assertTrue(third.stoppedBecause.contains("306,000") && third.stoppedBecause.contains("OutOfDirectMemory"),
                third.stoppedBecause);
    }

    @Test(groups = "unit", timeOut = 10_000)
    public void aCleanFleetLeavesTheRunOk() {
        ModeResult result = result(1_000);
        Drain.noteFleet(new BenchSettings(), result, new FleetState());
        assertTrue(result.ok());
        assertTrue(result.notes.isEmpty());
    }
}
