/**
 * The text the synthetic tokenizer's merges are learned from, written for kvscope: short, plain
 * English in the manner of children's stories, so common words and word pieces become tokens and
 * prompts like "Once upon a time" encode to a handful of ids. Changing it changes the tokenizer
 * (bump SYNTHETIC_FORMAT_VERSION).
 */
export const TOKENIZER_CORPUS = `
Once upon a time, there was a little girl named Mia. She lived in a small house near the woods with her mother and her old dog, Sam.
Every morning Mia went outside to play. She liked to run in the grass and look at the birds in the trees.
One day, Mia saw a big red ball under a tree. "Whose ball is this?" she asked. Nobody answered, so she picked it up.
The ball was soft and light. Mia threw it high into the sky, and Sam ran after it. They played all day long.
When the sun went down, Mia was tired and happy. She took the ball home and put it next to her bed.
The next morning, a boy named Tom came to the door. "I lost my red ball," he said. "Have you seen it?"
Mia felt sad, because she loved the ball. But she knew it was not hers. She gave the ball back to Tom.
Tom smiled and said, "Thank you! Do you want to play with me?" Mia nodded, and they went to the park together.
From that day on, Mia and Tom were best friends. They shared the ball, and they shared their toys, and they had lots of fun.
Once there was a small cat who wanted to fly. The cat watched the birds every day and wished it had wings.
One morning the cat climbed to the top of the tallest tree. It looked down and felt scared, because the ground was far away.
A kind bird came and sat next to the cat. "Why are you up here?" asked the bird. "I want to fly like you," said the cat.
The bird laughed, but not in a mean way. "Cats do not fly," it said. "But you can jump, and you can climb, and you can run very fast."
The cat thought about it and felt better. It climbed down the tree slowly and ran home to tell its mom.
Its mom gave it a big hug and a bowl of warm milk. The cat was happy to be a cat after all.
There was once a boy who found a shiny stone in the river. He put it in his pocket and walked home.
At night the stone began to glow. The boy was surprised. He showed it to his sister, and she was surprised too.
They wanted to know where the stone came from, so the next day they went back to the river to look for more.
They found three more stones, one blue, one green and one yellow. Together the stones made a beautiful light.
The boy and his sister put the stones on the window, and every night their room was full of colors.
Lily had a garden with many flowers. She gave them water every day and sang them songs.
One day a storm came and the wind was very strong. Lily was worried about her flowers.
After the storm, she ran outside. Some flowers were broken, but many were still standing in the sun.
Lily was brave. She planted new seeds, and soon the garden was even more beautiful than before.
Ben wanted to build the biggest sand castle on the beach. He worked very hard, and his friends helped him.
When the castle was finished, it was tall and strong, with a door, four towers and a little flag on top.
Then a big wave came and washed part of the castle away. Ben was sad at first, but then he laughed.
"We can build it again," he said, "and this time we will make it even better." And they did.
The little bear could not sleep. It was dark and quiet, and the bear heard a strange sound outside.
The bear's father said, "Do not be afraid. It is only the wind in the trees." The little bear closed its eyes.
It thought about honey, and the warm sun, and playing in the river. Soon it was fast asleep.
Numbers help us count: one, two, three, four, five, six, seven, eight, nine, ten. 1 2 3 4 5 6 7 8 9 10 100 2024.
What is your name? Where do you live? How old are you? I am happy today. We can go out and play! It's fun, isn't it?
`;
