module rocemu.test/gocgo

go 1.19
