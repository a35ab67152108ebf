module gov.dev/gov

go 1.19
