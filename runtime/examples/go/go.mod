module gov.example/replay

go 1.19
