package io.github.pulsarbroadcast.broadcast.dispatch;

import org.testng.annotations.Test;

/**
 * The randomized model test of the dispatch core ({@link DispatchModel}): thousands of random schedules per run, each
 * checked step by step against a reference model. A failure names its seed; rerun exactly that schedule with
 * {@code -Dbroadcast.model.seed=<seed>}. {@code -Dbroadcast.model.schedules=N} (and {@code ...steps=N}) make the long
 * nightly run, for example {@code ./mvnw -pl broadcast-subscription test -Dgroups=unit
 * -Dtest=DispatchModelTest -Dbroadcast.model.schedules=200000}.
 */
public class DispatchModelTest {

    private static final long SEED = Long.getLong("broadcast.model.seed", -1L);
    private static final int SCHEDULES = Integer.getInteger("broadcast.model.schedules", 3_000);
    private static final int STEPS = Integer.getInteger("broadcast.model.steps", 300);

    @Test(groups = "unit", timeOut = 600_000)
    public void randomSchedulesKeepEveryGuarantee() {
        if (SEED >= 0) {
            new DispatchModel(SEED).run(STEPS);
            return;
        }
        long base = Long.getLong("broadcast.model.base", System.nanoTime() & 0xffff_ffffL) * 1_000_003L;
        System.out.println("DispatchModelTest: " + SCHEDULES + " schedules of " + STEPS + " steps, seeds from "
                + base);
        for (int i = 0; i < SCHEDULES; i++) {
            new DispatchModel(base + i).run(STEPS);
        }
    }
}
