package embedded_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/embedded"
)

func ExampleStartIMAP() {
	s, err := embedded.StartIMAP(&embedded.IMAPOptions{Users: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	c, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.Login(embedded.UserName(2), s.Password()).Wait(); err != nil {
		fmt.Println(err)
		return
	}
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: INBOX holds %d messages\n", embedded.UserName(2), sel.NumMessages)
	fmt.Println("logins:", s.Stats().LoginsOK)
	// Output:
	// user2: INBOX holds 5 messages
	// logins: 1
}

func ExampleIMAP_Capacity() {
	s, err := embedded.StartIMAP(&embedded.IMAPOptions{Workers: 4, ServiceTime: 20 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Printf("saturates at %.0f commands/s\n", s.Capacity())
	// Output: saturates at 200 commands/s
}

func ExampleStartNATS() {
	dir, err := os.MkdirTemp("", "embedded-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	n, err := embedded.StartNATS(&embedded.NATSOptions{StoreDir: dir, DontListen: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer n.Shutdown()
	nc, err := n.Connect()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	js, _ := jetstream.New(nc)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EX", Subjects: []string{"ex.>"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := js.Publish(ctx, "ex.hello", []byte("hi")); err != nil {
		fmt.Println(err)
		return
	}
	info, _ := st.Info(ctx)
	fmt.Println("messages in stream:", info.State.Msgs)
	// Output: messages in stream: 1
}
