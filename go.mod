module github.com/ratebench/ratebench

go 1.26
