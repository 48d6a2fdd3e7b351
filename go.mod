module github.com/mltop/mltop

go 1.26.8
