module github.com/agenthub/hub

go 1.26.8
