// A broadcast consumer written with the Go Pulsar client, for BroadcastGoClientTest.
//
// The Go client selects broadcast as usage.md shows: subscription type Failover, a consumer name (the identity
// the consumer's position is kept under), and pulsar.subscription.mode=broadcast as a consumer property, or with
// the flag "subscription-property" as a subscription property (the client has sent those since v0.8.0). It takes
// its messages with Receive, or with the flag "chan" from the consumer's channel as usage.md's snippet does.
//
// Usage: broadcastconsumer SERVICE_URL TOPIC SUBSCRIPTION CONSUMER_NAME COUNT [subscription-property] [chan]
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
	usage := fmt.Errorf("usage: broadcastconsumer SERVICE_URL TOPIC SUBSCRIPTION CONSUMER_NAME COUNT" +
		" [subscription-property] [chan]")
	if len(args) < 5 {
		return usage
	}
	flags := map[string]bool{}
	for _, flag := range args[5:] {
		if flag != "subscription-property" && flag != "chan" {
			return usage
		}
		flags[flag] = true
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
	if flags["subscription-property"] {
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
		msg, err := next(consumer, flags["chan"])
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

// next waits up to a minute for the consumer's next message, from Receive or from its channel.
func next(consumer pulsar.Consumer, fromChan bool) (pulsar.Message, error) {
	if !fromChan {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return consumer.Receive(ctx)
	}
	select {
	case cm, ok := <-consumer.Chan():
		if !ok {
			return nil, fmt.Errorf("the consumer's channel was closed")
		}
		return cm.Message, nil
	case <-time.After(60 * time.Second):
		return nil, fmt.Errorf("no message on the consumer's channel within 60 s")
	}
}
