package io.github.pulsarbroadcast.broadcast.dispatch;

import java.util.AbstractList;
import java.util.Iterator;
import java.util.Set;
import org.apache.pulsar.broker.service.Consumer;

/**
 * The dispatcher's consumers as the {@code List} that stock Pulsar asks for, without copying: stock code calls
 * {@code getConsumers().isEmpty()} on every consumer removal and iterates the list for stats, and a copy per call
 * would cost O(n) each time with 100,000 consumers. {@code size}, {@code isEmpty} and iteration are served by the
 * live key set; {@link #get} walks it (O(i)), which stock code does not use on this dispatcher's list.
 *
 * <p>Threading: a weakly consistent view of a concurrent set; any thread.
 */
final class ConsumerListView extends AbstractList<Consumer> {

    private final Set<Consumer> consumers;

    ConsumerListView(Set<Consumer> consumers) {
        this.consumers = consumers;
    }

    @Override
    public Consumer get(int index) {
        if (index < 0) {
            throw new IndexOutOfBoundsException(index);
        }
        int i = 0;
        for (Consumer c : consumers) {
            if (i++ == index) {
                return c;
            }
        }
        throw new IndexOutOfBoundsException(index);
    }

    @Override
    public int size() {
        return consumers.size();
    }

    @Override
    public boolean isEmpty() {
        return consumers.isEmpty();
    }

    @Override
    public Iterator<Consumer> iterator() {
        return consumers.iterator();
    }

    @Override
    public boolean contains(Object o) {
        return consumers.contains(o);
    }
}
