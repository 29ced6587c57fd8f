from qizhong.cli.main import main

raise SystemExit(main())
