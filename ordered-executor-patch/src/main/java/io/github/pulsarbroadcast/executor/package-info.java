/**
 * A subscription-keyed ordered executor for the broadcast subscription plugin.
 *
 * <p>Stock Pulsar 2.10 keys its ordered work by <em>topic</em> name on BookKeeper's {@code OrderedExecutor}, so
 * every subscription of a topic runs on one thread, and it sends the ACK of a message to the same thread as the
 * SEND, where the ACK waits behind every task queued in between (up to ~10,000 with 100K consumers, in NTT's
 * measurements). This package fixes both:
 *
 * <ul>
 *   <li>ordered work is keyed by {@link io.github.pulsarbroadcast.executor.SubscriptionKey} (topic +
 *       subscription), so the subscriptions of one topic spread over the threads;</li>
 *   <li>work that needs no ordering, such as ACKs, goes to a random thread with
 *       {@link io.github.pulsarbroadcast.executor.SubscriptionOrderedExecutor#executeUnordered(Runnable)}.</li>
 * </ul>
 *
 * <p><b>Threading model.</b> {@link io.github.pulsarbroadcast.executor.SubscriptionOrderedExecutor} owns a fixed
 * set of single-threaded queues (those of a wrapped BookKeeper {@code OrderedExecutor}). Tasks with the same key
 * run on the same thread in submission (FIFO) order; there is no ordering across keys; unordered tasks may run
 * concurrently with anything, and before ordered tasks submitted earlier. The value classes
 * ({@link io.github.pulsarbroadcast.executor.SubscriptionKey},
 * {@link io.github.pulsarbroadcast.executor.ShutdownReport}) are immutable and safe to share between threads.
 */
package io.github.pulsarbroadcast.executor;
