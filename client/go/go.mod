module memberrewards.example/sdk

go 1.19
