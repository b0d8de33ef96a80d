// A broadcast consumer written with the Go Pulsar client, for BroadcastGoClientTest.
//
// The Go client selects broadcast as usage.md shows: subscription type Failover, a consumer name (the identity
// the consumer's position is kept under), and pulsar.subscription.mode=broadcast as a consumer property, or with
// the sixth argument "subscription-property" as a subscription property (the client has sent those since v0.8.0).
//
// Usage: broadcastconsumer SERVICE_URL TOPIC SUBSCRIPTION CONSUMER_NAME COUNT [subscription-property]
// Prints READY once subscribed, then one line per message value (each acknowledged), then DONE, and exits after
// closing the consumer; any error is printed as "ERROR ..." and exits with status 1.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/sirupsen/logrus"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 5 && (len(args) != 6 || args[5] != "subscription-property") {
		return fmt.Errorf("usage: broadcastconsumer SERVICE_URL TOPIC SUBSCRIPTION CONSUMER_NAME COUNT" +
			" [subscription-property]")
	}
	serviceURL, topic, subscription, name := args[0], args[1], args[2], args[3]
	count, err := strconv.Atoi(args[4])
	if err != nil {
		return fmt.Errorf("COUNT: %w", err)
	}
	quiet := logrus.New()
	quiet.SetOutput(os.Stderr)
	quiet.SetLevel(logrus.WarnLevel)
	client, err := pulsar.NewClient(pulsar.ClientOptions{URL: serviceURL, Logger: plog.NewLoggerWithLogrus(quiet)})
	if err != nil {
		return err
	}
	defer client.Close()
	options := pulsar.ConsumerOptions{
		Topic:            topic,
		SubscriptionName: subscription,
		Type:             pulsar.Failover,
		Name:             name,
	}
	broadcast := map[string]string{"pulsar.subscription.mode": "broadcast"}
	if len(args) == 6 {
		options.SubscriptionProperties = broadcast
	} else {
		options.Properties = broadcast
	}
	consumer, err := client.Subscribe(options)
	if err != nil {
		return err
	}
	fmt.Println("READY")
	for i := 0; i < count; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		msg, err := consumer.Receive(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("message %d of %d: %w", i+1, count, err)
		}
		fmt.Println(string(msg.Payload()))
		if err := consumer.Ack(msg); err != nil {
			return err
		}
	}
	fmt.Println("DONE")
	consumer.Close()
	return nil
}
