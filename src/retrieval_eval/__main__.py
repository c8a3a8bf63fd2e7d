from retrieval_eval.cli import main

main()
