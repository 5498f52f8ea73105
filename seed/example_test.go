package seed_test

import (
	"fmt"

	"github.com/imapload/imapload/seed"
)

func ExampleParseSizes() {
	sizes, err := seed.ParseSizes("2k-8k:70,8k-64k:20,64k-1m:8,1m-8m:2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sizes.Describe())
	// Output: 2k-8k 70%, 8k-64k 20%, 64k-1m 8%, 1m-8m 2% (log-uniform within a range; mean 105 KiB; 32k and larger carry a base64 attachment)
}

func ExampleFolders_Targets() {
	folders, err := seed.ParseFolders("INBOX:70,Archive:20,Sent:10,Drafts=5")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range folders.Targets(1000) {
		fmt.Println(t.Folder, t.Count)
	}
	// Output:
	// INBOX 700
	// Archive 200
	// Sent 100
	// Drafts 5
}
