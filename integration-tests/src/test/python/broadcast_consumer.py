"""A broadcast consumer written with the Python Pulsar client (C++ core), for BroadcastPythonClientTest.

The Python client cannot set subscription properties, so it selects broadcast with the consumer property
pulsar.subscription.mode=broadcast and subscription type Failover.

Usage: broadcast_consumer.py SERVICE_URL TOPIC SUBSCRIPTION CONSUMER_NAME COUNT
Prints READY once subscribed, then one line per message value, then DONE.
"""
import sys

import pulsar


def main():
    service_url, topic, subscription, name, count = sys.argv[1:6]
    client = pulsar.Client(service_url)
    try:
        consumer = client.subscribe(
            topic,
            subscription,
            consumer_type=pulsar.ConsumerType.Failover,
            consumer_name=name,
            properties={"pulsar.subscription.mode": "broadcast"},
        )
        print("READY", flush=True)
        for _ in range(int(count)):
            msg = consumer.receive(timeout_millis=60000)
            print(msg.data().decode("utf-8"), flush=True)
            consumer.acknowledge(msg)
        print("DONE", flush=True)
        consumer.close()
    finally:
        client.close()


if __name__ == "__main__":
    main()
