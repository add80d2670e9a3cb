module github.com/heraldfed/herald

go 1.26
